"""Remedies as typed steps: in the document and its schema, read back, and shown as what they are."""

from __future__ import annotations

import jsonschema
from fallback_doctor.core.bundle.html import render_html
from fallback_doctor.core.document.basics import to_jsonable
from fallback_doctor.core.document.remedy import remedy_lines
from fallback_doctor.core.document.schema import report_schema
from fallback_doctor.core.flow.steps import empty_inference
from fallback_doctor.core.judgement.checks.remedy import loader_path_steps, release_archive_steps
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.facts.process import ProcessFacts, ServiceUnit
from fallback_doctor.core.model.result import (
    CodeStep,
    ConfigStep,
    EnvironmentStep,
    Layer,
    ManualStep,
    RunStep,
    Severity,
    finding_from_dict,
    step_shell,
)
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.views.text_report import render_text

STEPS = (
    RunStep(("/app/venv/bin/python", "-m", "pip", "install", "nvidia-cudnn-cu13")),
    EnvironmentStep({"LD_LIBRARY_PATH": "/app/venv/lib/python3.11/site-packages/nvidia/cu13/lib"}),
    CodeStep("import onnxruntime\nonnxruntime.preload_dlls()", option=2),
    ConfigStep("/opt/bareun/config/bareun.json", "/executionProvider/provider", "cuda", option=3),
    ManualStep("Restart the server.", option=3),
)


def _finding() -> dict:
    finding = make_finding(
        "cuda.runtime_not_on_loader_path",
        Cause.CUDA_RUNTIME_MISSING,
        Layer.CUDA,
        Severity.ERROR,
        params={"dirs": ["/x"]},
        steps=STEPS,
    )
    return to_jsonable(finding)


def test_steps_are_in_the_schema_and_read_back_unchanged() -> None:
    schema = report_schema()
    data = _finding()
    jsonschema.Draft202012Validator({"$ref": "#/$defs/finding", "$defs": schema["$defs"]}).validate(data)
    assert to_jsonable(finding_from_dict(data)) == data
    assert [step["kind"] for step in data["remediation"]["steps"]] == [
        "run",
        "environment",
        "code",
        "config",
        "manual",
    ]
    # commands hold the shell form of run and environment steps only: never the Python code
    assert data["remediation"]["commands"] == [
        "/app/venv/bin/python -m pip install nvidia-cudnn-cu13",
        "export LD_LIBRARY_PATH=/app/venv/lib/python3.11/site-packages/nvidia/cu13/lib:$LD_LIBRARY_PATH",
    ]


def test_a_step_of_an_unknown_kind_is_refused_by_the_schema() -> None:
    schema = report_schema()
    data = _finding()
    data["remediation"]["steps"].append({"kind": "shell", "text": "rm -rf /"})
    validator = jsonschema.Draft202012Validator({"$ref": "#/$defs/finding", "$defs": schema["$defs"]})
    assert not validator.is_valid(data)


def test_python_is_shown_as_code_never_as_a_shell_command() -> None:
    document = {"verdict": "gpu_unusable", "findings": [_finding()], "inference": empty_inference(None)}
    text = render_text(document, verbose=True)
    assert "$ /app/venv/bin/python -m pip install nvidia-cudnn-cu13" in text
    assert "$ import onnxruntime" not in text and "        import onnxruntime" in text
    assert "Or instead (option 2):" in text
    summary = render_text(document)  # one screen: the first option, and a word that there is more
    assert "Or instead (option 2):" not in summary and "2 other ways to do it" in summary
    assert '"cuda"' in text and "/executionProvider/provider" in text
    html = render_html(document)
    assert '<pre class="code"><code>import onnxruntime\nonnxruntime.preload_dlls()</code></pre>' in html
    assert "$ import" not in html
    styles = [style for style, _ in remedy_lines(document["findings"][0]["remediation"])]
    assert styles.count("code") == 1 and styles.count("command") == 2


def test_the_environment_step_fits_where_the_application_runs() -> None:
    unit = ServiceUnit("bareun.service", None, {}, (), "systemctl show")
    service = EnvironmentSnapshot(
        process=ProcessFacts(pid=1, executable=None, mapped_libraries=(), environment=None, unit=unit)
    )
    [step] = loader_path_steps(service, ["/opt/cuda/lib"], windows=False)
    assert isinstance(step, EnvironmentStep)
    assert (step.scope, step.unit, step.mode) == ("systemd", "bareun.service", "set")
    assert (
        step_shell(step)
        == 'systemctl edit bareun.service  # add under [Service]: Environment="LD_LIBRARY_PATH=/opt/cuda/lib"'
    )


def test_a_native_server_gets_the_exact_release_archive_of_its_version() -> None:
    run_fetch, run_unpack, restart = release_archive_steps(
        "/opt/bareun/lib", "1.23.2", False, EnvironmentSnapshot()
    )
    assert isinstance(run_fetch, RunStep) and run_fetch.where == "host"
    assert run_fetch.argv[-1].endswith("/v1.23.2/onnxruntime-linux-x64-gpu-1.23.2.tgz")
    assert isinstance(run_unpack, RunStep) and "/opt/bareun/lib" in run_unpack.argv
    assert isinstance(restart, ManualStep)
    assert restart.text == "Restart the server."
    assert restart.words is not None and restart.words.id == "remedy.manual.restart_server"


def test_a_fell_back_session_is_not_compared_with_the_cpu_as_if_it_were_the_gpu() -> None:
    from fallback_doctor.core.language.texts import render_text as words

    for lang in ("en", "ko"):
        detail = words("inference.fell_back", lang, {"cpu_p50": "213.6", "gpu_p50": "44.1"})["detail"]
        # The fell-back session was run once, not timed: its one cold run is not quoted as a p50.
        assert "GPU" in detail and "213.6" in detail and "44.1" not in detail
    english = words("inference.fell_back", "en", {"cpu_p50": "213.6", "gpu_p50": "44.1"})["detail"]
    assert "no GPU figure" in english and "not timed again" in english


def test_in_a_container_the_loader_path_is_an_e_option_that_keeps_the_images_value() -> None:
    """``-e`` replaces the variable the image set (a CUDA image's own library folders): the step
    puts the new folders first and keeps what the container has now after them."""
    from fallback_doctor.core.model.facts.process import ContainerInfo

    container = ContainerInfo(
        "docker", "a" * 64, {"LD_LIBRARY_PATH": "/usr/local/nvidia/lib64"}, inspected=True
    )
    process = ProcessFacts(pid=1, executable=None, mapped_libraries=(), environment=None, container=container)
    [step, *_alternative] = loader_path_steps(
        EnvironmentSnapshot(process=process), ["/app/lib"], windows=False
    )
    assert isinstance(step, EnvironmentStep) and step.scope == "container" and step.mode == "set"
    assert step_shell(step) == "-e LD_LIBRARY_PATH=/app/lib:/usr/local/nvidia/lib64"
    lines = remedy_lines(to_jsonable({"steps": [step]}))
    assert lines[0] == ("text", "start the container with:")
