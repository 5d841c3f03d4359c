"""The Bareun target with real ONNX Runtime libraries: libPath, resolution, and the diagnosis wiring."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bareun_layout import SAMPLE_CONFIG, make_install
from fallback_doctor.core.flow.diagnosis import DiagnoseRequest, Verdict, diagnose
from fallback_doctor.core.language.texts import words_of
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.model.result import Layer, Severity
from fallback_doctor.core.readers.collect.run import CollectRequest
from fallback_doctor.core.readers.targets.bareun import log_files
from fallback_doctor.core.readers.targets.libpath import inspect_lib_path, lib_path_ort_facts
from fallback_doctor.core.readers.targets.profile import TargetNotFound
from fallback_doctor.core.readers.targets.resolve import resolve_target
from fallback_doctor.core.readers.targets.spec import TargetKind, TargetSpec

NO_ROOTS: tuple[str, ...] = ()


def _env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "BAREUN_ROOT"}


# --- libPath ---------------------------------------------------------------------------------------


def test_cpu_only_lib_path_version_from_the_file_without_loading_it(tmp_path: Path) -> None:
    root = make_install(tmp_path, lib="cpu")
    lib = inspect_lib_path(str(root / "lib"), _env())
    assert lib.core_library == str(root / "lib" / "libonnxruntime.so.1")
    # libonnxruntime.so.1 names no version; its bytes do (VERS_1.23.2), and it was never loaded.
    assert (lib.version, lib.version_source) == ("1.23.2", "ELF version definition")
    assert lib.gpu_providers == () and lib.provider_libraries == ()
    facts = lib_path_ort_facts(lib)
    assert facts.providers_in_build == ("CPUExecutionProvider",)
    assert not facts.has_cuda_provider


def test_version_from_the_c_api_only_when_asked_to_load(tmp_path: Path) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    # The real library with its VERS_ node renamed: only loading it can tell the version.
    data = (make_install(tmp_path / "src", lib="cpu") / "lib" / "libonnxruntime.so.1").read_bytes()
    (folder / "libonnxruntime.so.1").write_bytes(data.replace(b"VERS_1.23.2", b"XERS_1.23.2"))
    assert inspect_lib_path(str(folder), _env()).version is None
    lib = inspect_lib_path(str(folder), _env(), load=True)
    assert (lib.version, lib.version_source) == ("1.23.2", "C API")


def test_a_library_that_does_not_load_falls_back_to_its_name(tmp_path: Path) -> None:
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "libonnxruntime.so.1.20.1").write_bytes(b"\x7fELF" + b"\0" * 60)
    lib = inspect_lib_path(str(folder), _env(), load=True)
    assert (lib.version, lib.version_source) == ("1.20.1", "file name")
    assert lib.load_error


def test_gpu_lib_path_providers_and_requirements(tmp_path: Path) -> None:
    root = make_install(tmp_path, lib="gpu")
    lib = inspect_lib_path(str(root / "lib"), _env())
    assert (lib.version, lib.version_source) == ("1.31.1", "ELF version definition")
    assert set(lib.gpu_providers) == {"CUDAExecutionProvider", "TensorrtExecutionProvider"}
    facts = lib_path_ort_facts(lib)
    assert facts.has_cuda_provider
    assert facts.required_cuda_major == 13
    assert facts.required_cudnn_major == 9
    assert facts.shared_library == str(root / "lib" / "libonnxruntime_providers_shared.so")
    assert "needs libcublasLt.so.13" in (facts.requirement_source or "")


@pytest.mark.parametrize("fifo_name", ["libonnxruntime.so.1", "libonnxruntime_providers_cuda.so"])
def test_a_fifo_in_lib_path_is_refused_at_once_and_named(tmp_path: Path, fifo_name: str) -> None:
    root = make_install(tmp_path, lib="cpu")
    folder = root / "lib"
    if (folder / fifo_name).exists():
        (folder / fifo_name).unlink()
    os.mkfifo(folder / fifo_name)
    started = time.monotonic()
    lib = inspect_lib_path(str(folder), _env(), load=True)
    facts = lib_path_ort_facts(lib)
    assert time.monotonic() - started < 5
    said = f"{fifo_name} was not read: it is a FIFO (named pipe), not a regular file"
    assert said in (lib.load_error or "")
    assert str(folder / fifo_name) not in lib.provider_libraries
    assert facts.providers_in_build == ("CPUExecutionProvider",)


def test_quick_inspection_runs_none_of_the_librarys_code(tmp_path: Path) -> None:
    # A library whose constructor writes a file: reading its version must not create the file.
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    marker = tmp_path / "constructor-ran"
    source = tmp_path / "evil.c"
    source.write_text(
        "#include <stdio.h>\n"
        f'__attribute__((constructor)) static void ran(void) {{ FILE *f = fopen("{marker}", "w"); '
        "if (f) fclose(f); }\n"
        'const char vers[] = "VERS_1.23.2";\n',
        encoding="utf-8",
    )
    folder = tmp_path / "lib"
    folder.mkdir()
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-o", str(folder / "libonnxruntime.so.1"), str(source)], check=True
    )
    lib = inspect_lib_path(str(folder), _env())
    assert (lib.version, lib.version_source) == ("1.23.2", "ELF version definition")
    assert not marker.exists()


def test_log_files_leave_rotations_to_the_reader(tmp_path: Path) -> None:
    for name in ("bareun.log", "bareun.log.1", "bareun.log.2.gz", "access.log"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    assert sorted(os.path.basename(p) for p in log_files(str(tmp_path))) == ["access.log", "bareun.log"]


# --- resolving the target --------------------------------------------------------------------------


def test_auto_takes_bareun_when_installed(tmp_path: Path) -> None:
    root = make_install(tmp_path, lib="cpu")
    target = resolve_target(TargetSpec(), {"BAREUN_ROOT": str(root)}, roots=NO_ROOTS)
    assert (target.kind, target.root, target.root_source) == ("bareun", str(root), "BAREUN_ROOT")
    assert target.requested_provider == "cuda"
    assert target.lib_path == str(root / "lib")
    assert target.log_paths == (str(root / "var" / "logs" / "bareun.log"),)
    found = resolve_target(TargetSpec(), _env(), roots=(str(root),))
    assert (found.kind, found.root_source) == ("bareun", "default location")


def test_auto_without_bareun_is_the_python_environment() -> None:
    target = resolve_target(TargetSpec(), _env(), roots=NO_ROOTS)
    assert (target.kind, target.python) == ("python", sys.executable)


def test_config_named_alone_finds_its_root(tmp_path: Path) -> None:
    root = make_install(tmp_path, lib="cpu")
    target = resolve_target(TargetSpec(config=str(root / "config" / "bareun.json")), _env(), roots=NO_ROOTS)
    assert (target.kind, target.root, target.root_source) == ("bareun", str(root), "--config")


@pytest.mark.parametrize(
    "spec",
    [
        TargetSpec(kind=TargetKind.BAREUN),
        TargetSpec(bareun_root="/nonexistent/bareun"),
        TargetSpec(config="/nonexistent/bareun.json"),
        TargetSpec(logs=("/nonexistent/server.log",)),
        TargetSpec(kind=TargetKind.LOG),
        TargetSpec(kind=TargetKind.PYTHON, python="/nonexistent/python"),
    ],
)
def test_named_files_that_are_not_there_are_usage_errors(spec: TargetSpec) -> None:
    with pytest.raises(TargetNotFound):
        resolve_target(spec, _env(), roots=NO_ROOTS)


def test_missing_config_is_a_finding_not_a_usage_error(tmp_path: Path) -> None:
    root = make_install(tmp_path, lib="cpu")
    (root / "config" / "bareun.json").unlink()
    target = resolve_target(TargetSpec(bareun_root=str(root)), _env(), roots=NO_ROOTS)
    assert [issue.code for issue in target.config_issues] == ["config_missing"]
    assert target.lib_path == str(root / "lib")
    assert target.notes


# --- the diagnosis, wired ----------------------------------------------------------------------------


def _diagnose(root: Path, **spec: object) -> tuple[object, list[object]]:
    request = DiagnoseRequest(
        collect=CollectRequest(
            env=_env(),
            target=TargetSpec(kind=TargetKind.BAREUN, bareun_root=str(root), **spec),  # type: ignore[arg-type]
        ),
        quick=True,
    )
    diagnosis = diagnose(request)
    return diagnosis, list(diagnosis.findings)


def test_cpu_only_lib_path_is_ep_not_in_build_with_the_log_quoted(tmp_path: Path) -> None:
    root = make_install(tmp_path, lib="cpu")
    diagnosis, findings = _diagnose(root)
    assert diagnosis.verdict == Verdict.GPU_UNUSABLE  # type: ignore[attr-defined]
    ids = [finding.id for finding in findings]  # type: ignore[attr-defined]
    assert "target.libpath_cpu_only" in ids
    assert "package.ep_not_in_build" not in ids  # the pip text does not fit a native server
    libpath = findings[ids.index("target.libpath_cpu_only")]
    assert libpath.cause == Cause.EP_NOT_IN_BUILD  # type: ignore[attr-defined]
    quoted = [item for item in libpath.evidence if item.label.startswith("log line")]  # type: ignore[attr-defined]
    assert quoted, libpath.evidence  # type: ignore[attr-defined]
    assert any("not enabled in this build" in item.value and item.line == 4 for item in quoted)
    errors_above = [
        f
        for f in findings[: ids.index("target.libpath_cpu_only")]
        if f.layer not in (Layer.CONFIG, Layer.DRIVER, Layer.DEVICE)
    ]  # type: ignore[attr-defined]
    assert errors_above == []  # only config and lower layers (no GPU here) can rank above it
    snapshot = diagnosis.snapshot  # type: ignore[attr-defined]
    assert snapshot.onnxruntime.package_dir == str(root / "lib")
    assert snapshot.python is None  # no Python environment is needed for Bareun
    assert diagnosis.target["lib_path"] == str(root / "lib")  # type: ignore[attr-defined]


def test_a_log_older_than_the_gpu_lib_path_is_an_earlier_state_not_a_cause(tmp_path: Path) -> None:
    """The log says "not enabled in this build" while libPath now holds the GPU build (the fix
    applied, the server not yet restarted): the log is shown as what it is, never as an error."""
    root = make_install(tmp_path, lib="gpu")
    _, findings = _diagnose(root)
    ids = [finding.id for finding in findings]  # type: ignore[attr-defined]
    assert "log.cause" not in ids and "target.libpath_cpu_only" not in ids
    outdated = findings[ids.index("log.outdated")]
    assert outdated.severity == Severity.INFO  # type: ignore[attr-defined]
    now = next(item for item in outdated.evidence if item.label == "machine now")  # type: ignore[attr-defined]
    assert "CUDAExecutionProvider" in now.value and str(root / "lib") in now.value
    assert any(item.line == 4 for item in outdated.evidence if item.label.startswith("log line"))  # type: ignore[attr-defined]
    assert "이전 상태" in words_of(outdated, "ko")["title"]  # type: ignore[attr-defined]


def test_cpu_by_configuration_comes_first_and_the_rest_is_information(tmp_path: Path) -> None:
    config = dict(SAMPLE_CONFIG, executionProvider={"provider": "cpu"})
    root = make_install(tmp_path, lib="cpu", config=config)
    diagnosis, findings = _diagnose(root)
    assert diagnosis.verdict == Verdict.CPU_BY_CONFIGURATION  # type: ignore[attr-defined]
    first = findings[0]
    assert first.id == "config.cpu_by_configuration"  # type: ignore[attr-defined]
    config_file = root / "config" / "bareun.json"
    lines = config_file.read_text(encoding="utf-8").split("\n")
    expected = next(number for number, text in enumerate(lines, 1) if '"provider": "cpu"' in text)
    assert (first.evidence[0].line, first.evidence[0].source) == (expected, str(config_file))  # type: ignore[attr-defined]
    gpu = [f for f in findings if f.layer not in (Layer.CONFIG, Layer.PROBE)]  # type: ignore[attr-defined]
    assert any(f.id == "target.libpath_cpu_only" for f in gpu)  # type: ignore[attr-defined]
    for finding in gpu:
        assert finding.severity == Severity.INFO  # type: ignore[attr-defined]
    libpath = next(f for f in gpu if f.id == "target.libpath_cpu_only")  # type: ignore[attr-defined]
    assert "Information only" in libpath.detail and "참고용" in words_of(libpath, "ko")["detail"]  # type: ignore[attr-defined]


def test_string_form_cpu_is_cpu_by_configuration(tmp_path: Path) -> None:
    root = make_install(tmp_path, lib="gpu", config=dict(SAMPLE_CONFIG, executionProvider="cpu"))
    diagnosis, _findings = _diagnose(root)
    assert diagnosis.verdict == Verdict.CPU_BY_CONFIGURATION  # type: ignore[attr-defined]


def test_gpu_lib_path_is_resolved_against_the_machine(tmp_path: Path) -> None:
    root = make_install(tmp_path, lib="gpu", log=None)
    diagnosis, findings = _diagnose(root)
    ids = [finding.id for finding in findings]  # type: ignore[attr-defined]
    assert "target.libpath_cpu_only" not in ids
    libraries = diagnosis.snapshot.libraries  # type: ignore[attr-defined]
    roots = {report.provider: report.root for report in libraries.reports}
    assert roots["CUDAExecutionProvider"] == str(root / "lib" / "libonnxruntime_providers_cuda.so")
    cuda = next(r for r in libraries.reports if r.provider == "CUDAExecutionProvider")
    assert any(res.name == "libcublasLt.so.13" and res.path is None for res in cuda.resolutions)
    assert any(f.layer == Layer.CUDA and f.severity == Severity.ERROR for f in findings)  # type: ignore[attr-defined]


def test_malformed_config_is_the_first_finding(tmp_path: Path) -> None:
    root = make_install(
        tmp_path, lib="cpu", config_text='{\n  "executionProvider": "gpu"\n  "libPath": "x"\n}'
    )
    _diagnosis, findings = _diagnose(root)
    first = findings[0]
    assert first.id == "config.malformed"  # type: ignore[attr-defined]
    assert first.evidence[0].line == 3 and "column 3" in first.evidence[0].value  # type: ignore[attr-defined]


def test_the_running_server_lends_its_environment(tmp_path: Path) -> None:
    """A real process that loaded libPath's library is found through its maps; its env is used."""
    root = make_install(tmp_path, lib="cpu", log=None)
    library = str(root / "lib" / "libonnxruntime.so.1")
    child_env = dict(_env(), LD_LIBRARY_PATH=str(root / "lib"), CUDA_VISIBLE_DEVICES="7")
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import ctypes, sys, time; ctypes.CDLL(sys.argv[1]); print('ready', flush=True); time.sleep(60)",
            library,
        ],
        env=child_env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        shell = dict(_env(), LD_LIBRARY_PATH="/technician/only", CUDA_VISIBLE_DEVICES="0")
        request = DiagnoseRequest(
            collect=CollectRequest(
                env=shell, target=TargetSpec(kind=TargetKind.BAREUN, bareun_root=str(root))
            ),
            quick=True,
        )
        started = time.monotonic()
        diagnosis = diagnose(request)
        assert time.monotonic() - started < 60
        snapshot = diagnosis.snapshot
        assert snapshot.process is not None and snapshot.process.pid == child.pid
        assert any(lib.path == library for lib in snapshot.process.mapped_libraries)
        assert snapshot.environment["LD_LIBRARY_PATH"] == str(root / "lib")
        assert snapshot.environment["CUDA_VISIBLE_DEVICES"] == "7"
        assert diagnosis.target["pid"] == str(child.pid)
        document = json.dumps(diagnosis.target)
        assert str(root) in document
    finally:
        child.kill()
        child.wait(timeout=10)
