"""collect_log and the log check: the log's cause settled with machine facts from REAL layouts.

The CUDA 12 layout is the gpu12-full scenario stack (real NVIDIA wheels); the empty one the
cpu-only stack. The log lines are ONNX Runtime's own (examples with sources in
resources/signatures/); the Bareun start-up line is the server's published one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fallback_doctor.core.judgement.checks.log import CHECKS, merge_log_findings
from fallback_doctor.core.language.texts import make_finding, words_of
from fallback_doctor.core.model.facts.libraries import LibraryFacts
from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.model.result import Evidence, Layer, Severity
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.collect.libraries import collect_libraries
from fallback_doctor.core.readers.collect.log import collect_log
from fallback_doctor.core.readers.targets.spec import TargetKind, TargetSpec
from process_children import stack_dir

pytestmark = pytest.mark.timeout(120)

CUBLAS11 = (
    "2024-08-22 10:38:52.670883465 [E:onnxruntime:Default, provider_bridge_ort.cc:1992 "
    "TryGetProviderInfo_CUDA] "
    "/onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1637 onnxruntime::Provider& "
    "onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library "
    "libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object file: "
    "No such file or directory"
)
LOG = (
    "Use config file: /opt/bareun/config/bareun.json\n"
    f"{CUBLAS11}\n"
    "2024-08-22 10:38:52.671 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 "
    "CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider.\n"
)


def _target(log_paths: tuple[str, ...] = ()) -> TargetFacts:
    return TargetFacts(
        kind="bareun",
        root=None,
        config_path=None,
        log_paths=log_paths,
        lib_path=None,
        requested_provider="cuda",
    )


def _layout(stack: str) -> LibraryFacts:
    site = stack_dir(stack)
    return collect_libraries(
        site_packages=[str(site)], provider_libraries=[], env={}, system_places=False, cache_path=None
    )


def _findings(snapshot: EnvironmentSnapshot) -> dict[str, object]:
    return {f.id: f for check in CHECKS for f in check(snapshot)}


@pytest.fixture(scope="module")
def log_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("logs") / "bareun.log"
    path.write_text(LOG, encoding="utf-8")
    return path


def test_collect_log_quotes_file_and_line(log_file: Path) -> None:
    facts = collect_log(_target((str(log_file),)), TargetSpec(kind=TargetKind.BAREUN))
    assert facts is not None and facts.sources == (str(log_file),)
    top = facts.causes[0]
    assert top.cause in ("cuda_runtime_missing", "cuda_major_mismatch")
    assert any(q.file == str(log_file) and q.line == 2 for q in top.evidence)
    assert top.fields.get("needed_major") == "11"
    # libcublasLt.so.11 missing: absent, or CUDA 12 beside an old build; the log leaves both open
    assert facts.outcome == "several_open"
    # --log wins over the profile's paths; pasted text is read too.
    pasted = collect_log(_target(("/nonexistent.log",)), TargetSpec(logs=(), log_text=LOG))
    assert pasted is not None and "<pasted text>" in pasted.sources
    assert pasted.unreadable and pasted.unreadable[0][0] == "/nonexistent.log"
    assert collect_log(_target(), TargetSpec()) is None


def test_cuda12_installed_settles_to_a_major_mismatch(log_file: Path) -> None:
    log = collect_log(_target((str(log_file),)), TargetSpec())
    libraries = _layout("gpu12-full")
    found = _findings(EnvironmentSnapshot(log=log, libraries=libraries))
    finding = found["log.cause"]
    assert finding.cause == "cuda_major_mismatch"  # type: ignore[attr-defined]
    assert finding.layer == Layer.CUDA and finding.severity == Severity.ERROR  # type: ignore[attr-defined]
    assert "CUDA 12" in finding.detail and "not 11" in finding.detail  # type: ignore[attr-defined]
    quoted = [e for e in finding.evidence if e.label.startswith("log line")]  # type: ignore[attr-defined]
    assert quoted[0].source == str(log_file) and quoted[0].line == 2
    assert "libcublasLt.so.11" in quoted[0].value
    assert words_of(finding, "ko")["title"] != words_of(finding, "en")["title"]  # type: ignore[attr-defined]


def test_no_cuda_at_all_settles_to_a_missing_runtime(log_file: Path) -> None:
    log = collect_log(_target((str(log_file),)), TargetSpec())
    found = _findings(EnvironmentSnapshot(log=log, libraries=_layout("cpu-only")))
    finding = found["log.cause"]
    assert finding.cause == "cuda_runtime_missing"  # type: ignore[attr-defined]
    assert "no CUDA library" in finding.detail  # type: ignore[attr-defined]


def test_a_static_finding_of_the_same_cause_takes_the_logs_lines(log_file: Path) -> None:
    log = collect_log(_target((str(log_file),)), TargetSpec())
    findings = list(_findings(EnvironmentSnapshot(log=log, libraries=_layout("gpu12-full"))).values())
    static = make_finding(
        "cuda.major_mismatch",
        "cuda_major_mismatch",
        Layer.CUDA,
        Severity.ERROR,
        params={"collector": "x", "error": "y"},
        evidence=(Evidence("needed", "x"),),
    )
    merged = merge_log_findings([static, *findings])  # type: ignore[list-item]
    assert not any(f.id == "log.cause" for f in merged)
    confirmed = [e for e in merged[0].evidence if e.label == "log line (confirms)"]
    assert confirmed and confirmed[0].source == str(log_file) and confirmed[0].line == 2
    # A different cause found statically leaves the log's finding alone.
    other = make_finding(
        "driver.missing",
        "driver_missing",
        Layer.DRIVER,
        Severity.ERROR,
        params={"collector": "x", "error": "y"},
    )
    assert any(f.id == "log.cause" for f in merge_log_findings([other, *findings]))  # type: ignore[list-item]


def test_hidden_signal_and_fallback_without_cause(tmp_path: Path) -> None:
    path = tmp_path / "app.log"
    path.write_text(
        "sess_options.log_severity_level = 3\nFalling back to ['CPUExecutionProvider'] and retrying.\n"
    )
    log = collect_log(_target((str(path),)), TargetSpec())
    assert log is not None and log.outcome == "not_said"
    found = _findings(EnvironmentSnapshot(log=log))
    assert found["log.fell_back"].severity == Severity.WARNING  # type: ignore[attr-defined]
    hidden = found["log.hidden.log_severity"]
    assert hidden.severity == Severity.INFO  # type: ignore[attr-defined]
    assert hidden.evidence[0].line == 1 and hidden.evidence[0].source == str(path)  # type: ignore[attr-defined]
    assert "WARNING" in hidden.detail and "WARNING" in words_of(hidden, "ko")["detail"]  # type: ignore[attr-defined]


def test_clean_and_unreadable_logs(tmp_path: Path) -> None:
    path = tmp_path / "quiet.log"
    path.write_text("server started\nlistening on 5656\n")
    found = _findings(
        EnvironmentSnapshot(log=collect_log(_target((str(path), str(tmp_path / "no.log"))), TargetSpec()))
    )
    assert "log.clean" in found and "log.unreadable" in found
