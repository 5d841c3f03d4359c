"""Every fix of every scenario pastes: ``remediation.script`` passes ``bash -n`` and shellcheck.

On the real broken stacks of tests/scenarios (``diagnose --json`` there, the same memoised run the
other scenario tests use), on Bareun-like installations with a real CPU-only ONNX Runtime
(tests/core/targets/bareun_layout.py; one asking for CUDA, one configured for the CPU), and on
typed remedies of every step kind (a code step, a placeholder, a systemd drop-in, a configuration
edit). In English (the document's own script) and in Korean (the same steps, Korean comments).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import scenario_runs as runs
from fallback_doctor.core.document.script import finding_script, fix_script
from fallback_doctor.core.flow.steps import application_python
from fallback_doctor.core.language.texts import make_finding
from fallback_doctor.core.model.result import (
    CodeStep,
    ConfigStep,
    EnvironmentStep,
    Layer,
    ManualStep,
    RunStep,
    Severity,
)

pytestmark = pytest.mark.scenario

SHELLCHECK = shutil.which("shellcheck")


def _problems(script: str) -> list[str]:
    """What ``bash -n`` and ``shellcheck -s bash`` say about a script ([] when it is clean)."""
    said: list[str] = []
    parsed = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, check=False)
    if parsed.returncode:
        said.append(f"bash -n: {parsed.stderr.strip()}")
    if SHELLCHECK is None:
        pytest.skip("shellcheck is not installed (scripts/system-deps.sh installs it)")
    checked = subprocess.run(
        [SHELLCHECK, "-s", "bash", "-"], input=script, capture_output=True, text=True, check=False
    )
    if checked.returncode:
        said.append(f"shellcheck: {checked.stdout.strip()}")
    return said


def _check_document(document: dict[str, Any]) -> int:
    """Every finding's script in both languages; how many scripts were checked."""
    python = application_python(document)
    checked = 0
    for finding in document["findings"]:
        remediation = finding.get("remediation")
        if not isinstance(remediation, dict):
            continue
        assert remediation.get("script") == fix_script(finding, "en", python), finding["id"]
        for lang in ("en", "ko"):
            script = finding_script(finding, lang, python)
            if not script:
                continue
            assert _problems(script) == [], f"{finding['id']} ({lang}):\n{script}"
            _assert_shape(script, remediation)
            checked += 1
    return checked


def _assert_shape(script: str, remediation: dict[str, Any]) -> None:
    """Prose only as comments, one option, the verify command last, no bare Python line."""
    code, here_document = [], False
    for line in script.splitlines():
        if here_document:  # Python for "$PY" or python3, never run by the shell itself
            here_document = line != "EOF"
        elif line and not line.startswith("#"):
            code.append(line)
            here_document = line.endswith("<<'EOF'")
    assert not any(line.startswith(("import ", "Or instead", "Restart")) for line in code), script
    options = {int(step.get("option") or 1) for step in remediation.get("steps") or []}
    if len(options) > 1:
        assert "Or instead" not in script
    if "<" in json.dumps(remediation.get("steps") or remediation.get("commands") or []):
        assert "<image>" not in "\n".join(code) and "<service>" not in "\n".join(code)


@pytest.mark.parametrize("scenario_id", sorted(runs.SCENARIOS))
def test_every_fix_of_a_scenario_pastes(scenario_id: str, diagnosis) -> None:  # type: ignore[no-untyped-def]
    result = diagnosis(scenario_id)
    _check_document(result.doc)


@pytest.mark.parametrize("provider", ["cuda", "cpu"])
def test_every_fix_of_a_bareun_like_installation_pastes(tmp_path: Path, provider: str) -> None:
    _root, document = runs.bareun_like_document(tmp_path, provider)
    assert _check_document(document) >= 2
    if provider == "cpu":  # two causes both needed: the first one's fix says the second must follow
        first = document["findings"][0]
        assert first["id"] == "config.cpu_by_configuration"
        assert "libPath holds a CPU-only ONNX Runtime" in first["remediation"]["script"]


def test_every_step_kind_pastes() -> None:
    """A code step, a placeholder, a systemd drop-in, an environment, a configuration edit, a
    download: each as the script writes it, and a second option left out."""
    steps = (
        RunStep(("/opt/app/bin/python", "-m", "pip", "install", "onnxruntime-gpu==1.23.2"), "application"),
        RunStep(("curl", "-fLO", "https://example.invalid/ort.tgz"), "host"),
        RunStep(
            (
                "python3",
                "-m",
                "pip",
                "install",
                "--upgrade",
                "--target",
                "/opt/b/nvidia-cu13",
                "--extra-index-url",
                "https://pypi.nvidia.com",
                "tensorrt-cu13==10.*",
            ),
            "host",
        ),
        RunStep(("apt-get", "install", "-y", "zlib1g"), "host"),
        RunStep(("docker", "run", "--rm", "--gpus", "all", "<image>", "nvidia-smi"), "container_host"),
        EnvironmentStep({"LD_LIBRARY_PATH": "/opt/app/nvidia/cu13/lib"}),
        EnvironmentStep({"LD_LIBRARY_PATH": "/opt/x"}, scope="systemd", unit=None),
        EnvironmentStep({"CUDA_MODULE_LOADING": "LAZY"}, scope="container", mode="set"),
        CodeStep("import onnxruntime\nonnxruntime.preload_dlls()"),
        ConfigStep("/opt/bareun/config/bareun.json", "/executionProvider/provider", "cuda"),
        ManualStep("Restart the server."),
        ManualStep("Reboot.", option=2),
    )
    finding = make_finding(
        "cuda.runtime_missing",
        "cuda_runtime_missing",
        Layer.CUDA,
        Severity.ERROR,
        params={"libraries": "libcublasLt.so.13", "major": 13, "packages": "nvidia-cublas"},
        steps=steps,
    )
    from fallback_doctor.core.document.basics import to_jsonable

    data = to_jsonable(finding)
    for python in ("/opt/app/bin/python", None):
        script = fix_script(data, "en", python)
        assert _problems(script) == [], script
        assert "\"$PY\" - <<'EOF'\nimport onnxruntime" in script
        assert ': "${IMAGE:?' in script and '"${IMAGE}"' in script
        assert ': "${SERVICE:?' in script and "[Service]" in script
        assert "--no-index --find-links wheels" in script and "pip download" in script
        # the folder pip installs into is not a package to fetch; the index to fetch from is kept
        assert (
            "download --dest wheels --extra-index-url https://pypi.nvidia.com 'tensorrt-cu13==10.*'" in script
        )
        assert "#   apt-get download zlib1g" in script and "#   sudo dpkg -i ./*.deb" in script
        assert "Reboot" not in script and "# Restart the server." in script
        assert script.rstrip().splitlines()[-1].startswith("ldd ") or "Verify" in script
        assert ("PY=/opt/app/bin/python" in script) == (python is not None)


@pytest.mark.parametrize("form", [{"provider": "cpu"}, "cpu"])
def test_the_cpu_setting_s_script_run_as_it_is_asks_for_the_gpu(tmp_path: Path, form: object) -> None:
    """The script of "The configuration asks for the CPU", pasted into bash as it is: the file is
    changed (a copy kept), its verify command runs last, and the next diagnosis names the libPath."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "core" / "targets"))
    from bareun_layout import SAMPLE_CONFIG, make_install

    root = make_install(tmp_path, config={**SAMPLE_CONFIG, "executionProvider": form})
    env = {k: v for k, v in os.environ.items() if k not in ("BAREUN_ROOT", "LD_LIBRARY_PATH")}
    command = [*runs.tool_command(), "diagnose", "--target", "bareun", "--bareun-root", str(root)]

    def diagnose() -> dict[str, Any]:
        done = subprocess.run(
            [*command, "--json", "--quick"], capture_output=True, text=True, timeout=300, env=env, check=False
        )
        document: dict[str, Any] = json.loads(done.stdout)
        return document

    before = diagnose()
    first = before["findings"][0]
    assert first["id"] == "config.cpu_by_configuration"
    pasted = subprocess.run(
        ["bash"],
        input=first["remediation"]["script"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert pasted.returncode == 0, pasted.stderr
    assert "executionProvider" in pasted.stdout  # the verify command ran, last
    assert (root / "config" / "bareun.json.bak").is_file()
    after = diagnose()
    assert after["verdict"] != "cpu_by_configuration"
    assert after["first_cause"] == "target.libpath_cpu_only"
