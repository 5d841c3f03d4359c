"""``fallback-doctor diagnose --python <env> --json`` on real broken stacks.

Every scenario is checked against two witnesses that are not our code: what ONNX Runtime itself
did in the same environment (``ort`` fixture) and what the real loader resolves (``ldd``). This
machine has no NVIDIA driver, so every scenario also has ``driver_missing``, ranked first.
"""

from __future__ import annotations

import json

import pytest
import scenario_runs as runs
import scenario_stacks as stacks

pytestmark = pytest.mark.scenario

LAYER_ORDER = [
    "config",
    "driver",
    "device",
    "cuda",
    "cudnn",
    "tensorrt",
    "package",
    "loader",
    "resources",
    "probe",
    "unknown",
]
SEVERITY_ORDER = ["error", "warning", "info"]


def _texts(diag: runs.Diagnosis, cause: str) -> str:
    found = diag.with_cause(cause)
    assert found, f"no {cause} finding\n{diag.describe()}"
    return "\n".join(runs.finding_text(f) for f in found)


def _absent(diag: runs.Diagnosis, *causes: str) -> None:
    wrong = [c for c in causes if diag.with_cause(c)]
    assert not wrong, f"false finding(s) {wrong}\n{diag.describe()}"


# --- 7. every scenario: the document, the verdict, driver_missing first -----------------------


@pytest.mark.parametrize("scenario_id", list(runs.SCENARIOS))
def test_document_verdict_and_exit_code(diagnosis, scenario_id):
    diag = diagnosis(scenario_id)
    assert diag.doc["schema"] == "gpu-fallback-doctor/report"
    assert diag.doc["schema_version"] == 2
    assert diag.returncode == 1, diag.describe()
    assert diag.doc["verdict"] == "gpu_unusable", diag.describe()
    for f in diag.findings:
        assert {"id", "cause", "layer", "severity", "title", "detail", "evidence"} <= set(f)
        assert f["layer"] in LAYER_ORDER
        assert f["severity"] in {"error", "warning", "info"}


@pytest.mark.parametrize("scenario_id", list(runs.SCENARIOS))
def test_driver_missing_ranked_first_and_own_finding_reported(diagnosis, scenario_id):
    diag = diagnosis(scenario_id)
    causes = diag.causes
    assert "driver_missing" in causes, diag.describe()
    before = diag.findings[: diag.rank("driver_missing")]
    assert all(f["layer"] == "config" for f in before), diag.describe()
    assert runs.SCENARIOS[scenario_id].cause in causes, diag.describe()
    assert "libcuda.so.1" in _texts(diag, "driver_missing")


@pytest.mark.parametrize("scenario_id", list(runs.SCENARIOS))
def test_findings_ranked_config_then_severity_then_layer(diagnosis, scenario_id):
    # core.model.rank_findings: configuration first, then errors before warnings before
    # information, and within each severity the lowest layer first.
    diag = diagnosis(scenario_id)
    keys = [
        (
            0 if f["layer"] == "config" else 1,
            SEVERITY_ORDER.index(f["severity"]),
            LAYER_ORDER.index(f["layer"]),
        )
        for f in diag.findings
    ]
    assert keys == sorted(keys), diag.describe()
    errors = [f["layer"] for f in diag.findings if f["severity"] == "error"]
    assert errors, diag.describe()


@pytest.mark.parametrize("scenario_id", list(runs.SCENARIOS))
def test_no_remedy_installs_what_is_installed_and_one_finding_per_cause(diagnosis, scenario_id):
    """Issue 11, in every scenario: a pip install step never names a package the facts say is
    installed at that version (another version is a change, not a repeat; an uninstall first
    makes it a reinstall), and no two errors or warnings share a cause with the same steps."""
    diag = diagnosis(scenario_id)
    versions = {d["name"].lower(): d["version"] for d in diag.doc["environment"]["python"]["distributions"]}
    for finding in diag.findings:
        steps = (finding.get("remediation") or {}).get("steps") or []
        argvs = [step.get("argv") or [] for step in steps if step["kind"] == "run"]
        removed = {arg.lower() for argv in argvs if "uninstall" in argv for arg in argv}
        for argv in argvs:
            if argv[1:4] != ["-m", "pip", "install"] or "--force-reinstall" in argv:
                continue
            for requirement in (arg for arg in argv[4:] if not arg.startswith("-")):
                name, _, pin = requirement.partition("==")
                name = name.split("[")[0].lower()
                again = name in versions and name not in removed and (not pin or pin == versions[name])
                assert not again, (finding["id"], requirement, versions.get(name), diag.describe())
    seen: dict[tuple[str, str], str] = {}
    for finding in diag.findings:
        if finding["severity"] == "info":
            continue
        key = (finding["cause"], json.dumps((finding.get("remediation") or {}).get("steps"), sort_keys=True))
        assert key not in seen or not (finding.get("remediation") or {}).get("steps"), (
            f"{finding['id']} repeats {seen[key]}: same cause, same steps\n{diag.describe()}"
        )
        seen[key] = finding["id"]


@pytest.mark.parametrize("scenario_id", list(runs.SCENARIOS))
def test_snapshot_agrees_with_onnxruntime_itself(diagnosis, ort, scenario_id):
    # What the tool read from the package's files (without importing it) is what ONNX Runtime
    # reports once imported: the version and the providers compiled in.
    diag = diagnosis(scenario_id)
    run = ort(scenario_id)
    snap = diag.doc["environment"]["onnxruntime"]
    assert snap["version"] == run.result["version"], snap
    # AzureExecutionProvider (a remote-call provider of the CPU wheels) included: it has no
    # library of its own, the tool finds it in the binding's RTTI names.
    assert snap["providers_in_build"] == run.available, snap


# --- 1. CPU-only package ----------------------------------------------------------------------


def test_cpu_only_package_is_ep_not_in_build(diagnosis, ort):
    diag = diagnosis("s1_cpu_only")
    assert runs.CUDA not in ort("s1_cpu_only").available
    text = _texts(diag, "ep_not_in_build")
    assert "onnxruntime-gpu" in text
    # No CUDA library is needed by a build without CUDA: nothing to be missing or mismatched.
    _absent(diag, "cuda_runtime_missing", "cuda_major_mismatch", "cudnn_missing", "package_conflict")


# --- 2. both packages -------------------------------------------------------------------------


def test_both_packages_is_package_conflict(diagnosis, ort):
    diag = diagnosis("s2_conflict")
    assert ort("s2_conflict").session_providers == [runs.CPU]
    text = _texts(diag, "package_conflict")
    assert "onnxruntime-gpu" in text
    assert "1.23.2" in text
    remedy = "\n".join(runs.remediation_text(f) for f in diag.with_cause("package_conflict"))
    assert "uninstall" in remedy
    # It says whose files are in effect, and why the GPU libraries left on disk do not help.
    assert "CPU-only build" in text and "libonnxruntime_providers_cuda.so" in text, diag.describe()


def test_conflict_with_the_gpu_build_in_effect(diagnosis, ort):
    diag = diagnosis("s2b_conflict_gpu_last")
    assert runs.CUDA in ort("s2b_conflict_gpu_last").available
    assert diag.with_cause("package_conflict"), diag.describe()
    # The GPU build is the one in effect, so its own missing libraries are reported as well.
    assert ort("s2b_conflict_gpu_last").first_missing_library() in "\n".join(
        runs.finding_text(f) for f in diag.findings
    )
    _absent(diag, "ep_not_in_build")
    assert "installed last" in _texts(diag, "package_conflict")


def test_partial_other_cuda_major_is_not_offered_as_a_way_out(diagnosis):
    # /usr/local/cuda-13.0 here has libcudart.so.13 but no cuBLAS or cuRAND: installing the
    # CUDA 13 build of onnxruntime-gpu alone would fail too, and the fix must not say otherwise.
    diag = diagnosis("s2b_conflict_gpu_last")
    mismatch = diag.with_cause("cuda_major_mismatch")
    assert mismatch, diag.describe()
    remedy = "\n".join(runs.remediation_text(f) for f in mismatch)
    assert "onnxruntime-gpu==" not in remedy, diag.describe()
    assert "libcublasLt.so.13" in remedy and "nvidia-cuda-runtime-cu12" in remedy, diag.describe()


def test_complete_other_cuda_major_is_offered_as_a_way_out(diagnosis):
    diag = diagnosis("s6_cuda12_build_cuda13_libs")
    remedy = "\n".join(runs.remediation_text(f) for f in diag.with_cause("cuda_major_mismatch"))
    assert "onnxruntime-gpu==1.31.1" in remedy, diag.describe()


# --- 3. GPU build, no CUDA library ------------------------------------------------------------


def test_no_cuda_names_every_missing_library(stack, diagnosis, ort):
    diag = diagnosis("s3_no_cuda")
    text = _texts(diag, "cuda_runtime_missing")
    # Every library the real loader cannot find (but the driver's) is named, not just the
    # first one that ONNX Runtime names.
    missing = set(stacks.ldd_not_found(stacks.provider_lib(stack("gpu13-bare")))) - {"libcuda.so.1"}
    assert {"libcublasLt.so.13", "libcublas.so.13", "libcurand.so.10"} <= missing
    for name in sorted(missing):
        assert name in text, f"{name} not named\n{diag.describe()}"
    assert ort("s3_no_cuda").first_missing_library() in text
    _absent(diag, "cuda_major_mismatch")


def test_no_cuda_remediation_names_the_cuda13_wheels(diagnosis):
    diag = diagnosis("s3_no_cuda")
    remedy = "\n".join(runs.remediation_text(f) for f in diag.with_cause("cuda_runtime_missing"))
    assert "nvidia-cublas" in remedy or "onnxruntime-gpu[cuda" in remedy, diag.describe()


def test_quick_gives_the_same_static_findings(diagnosis):
    full = diagnosis("s3_no_cuda")
    quick = diagnosis("s3_no_cuda", "--quick")
    assert quick.returncode == 1
    assert {"driver_missing", "cuda_runtime_missing"} <= set(quick.causes), quick.describe()
    assert quick.doc["verdict"] == full.doc["verdict"]


# --- 4. wheels installed, not on the loader path ----------------------------------------------


def test_wheels_not_on_path_give_the_installed_not_loadable_fix(stack, diagnosis, ort):
    sc = runs.SCENARIOS["s4_wheels_not_on_path"]
    diag = diagnosis(sc.id)
    lib_dir = str(stacks.site_packages(stack(sc.stack)) / runs.CU13_LIB)
    text = _texts(diag, "cuda_runtime_missing")
    assert ort(sc.id).first_missing_library() in text
    remedy = "\n".join(runs.remediation_text(f) for f in diag.with_cause("cuda_runtime_missing"))
    assert lib_dir in remedy or "preload_dlls" in remedy, diag.describe()
    # The fix works: with that directory on the loader path ONNX Runtime gets past every CUDA
    # library and stops at the driver.
    fixed = ort(sc.id, ld_path=lib_dir)
    assert fixed.first_missing_library() == "libcuda.so.1"


def test_wheels_not_on_path_do_not_advise_installing_them_again(stack, diagnosis):
    sc = runs.SCENARIOS["s4_wheels_not_on_path"]
    diag = diagnosis(sc.id)
    remedy = "\n".join(runs.remediation_text(f) for f in diag.with_cause("cuda_runtime_missing"))
    lib_dir = str(stacks.site_packages(stack(sc.stack)) / runs.CU13_LIB)
    assert lib_dir in remedy or "preload_dlls" in remedy
    assert "pip install nvidia-cublas" not in remedy, diag.describe()


# --- 5. CUDA on the path, no cuDNN ------------------------------------------------------------


def test_no_cudnn_is_found_although_onnxruntime_blames_the_driver(diagnosis, ort):
    diag = diagnosis("s5_no_cudnn")
    run = ort("s5_no_cudnn")
    assert run.first_missing_library() == "libcuda.so.1"  # what ONNX Runtime says
    assert run.first_missing_library() in _texts(diag, "driver_missing")
    text = _texts(diag, "cudnn_missing")
    assert "libcudnn" in text or "cuDNN" in text
    remedy = "\n".join(runs.remediation_text(f) for f in diag.with_cause("cudnn_missing"))
    assert "nvidia-cudnn-cu13" in remedy, diag.describe()
    _absent(diag, "cuda_runtime_missing", "cuda_major_mismatch")


def test_cudnn_installed_not_on_path_gives_the_path_fix(stack, diagnosis):
    sc = runs.SCENARIOS["s5b_cudnn_not_on_path"]
    diag = diagnosis(sc.id)
    cudnn_dir = str(stacks.site_packages(stack(sc.stack)) / "nvidia" / "cudnn" / "lib")
    assert "libcudnn.so.9" in _texts(diag, "cudnn_missing")
    remedy = "\n".join(runs.remediation_text(f) for f in diag.with_cause("cudnn_missing"))
    assert cudnn_dir in remedy or "preload_dlls" in remedy, diag.describe()
    assert "pip install nvidia-cudnn" not in remedy, diag.describe()
    _absent(diag, "cuda_runtime_missing", "cuda_major_mismatch")


# --- 6. CUDA 12 build, CUDA 13 libraries ------------------------------------------------------


def test_cuda12_build_with_cuda13_libraries_is_a_major_mismatch(diagnosis, ort):
    diag = diagnosis("s6_cuda12_build_cuda13_libs")
    text = _texts(diag, "cuda_major_mismatch")
    assert "12" in text
    assert "13" in text
    assert ort("s6_cuda12_build_cuda13_libs").first_missing_library() in text
    # With the machine's facts at hand the diagnosis settles on one cause for the CUDA layer.
    _absent(diag, "cuda_runtime_missing")


# --- 8. TensorRT ------------------------------------------------------------------------------


def test_tensorrt_provider_without_libnvinfer(diagnosis, ort):
    diag = diagnosis("s8_tensorrt")
    assert "libnvinfer.so.10" in ort("s8_tensorrt", providers=(runs.TRT, runs.CPU)).output
    assert "libnvinfer.so.10" in _texts(diag, "tensorrt_missing")
    # The rest of the stack is complete: nothing else may be reported missing.
    _absent(diag, "cuda_runtime_missing", "cuda_major_mismatch", "cudnn_missing", "cudnn_major_mismatch")


def test_tensorrt_is_a_warning_only_when_the_application_asks_for_it(diagnosis, stack):
    """ONNX Runtime opens the TensorRT provider only for a session that asks for it: without a sign
    that the application does, a TensorRT that cannot load is a note, not a cause."""
    [plain] = [f for f in diagnosis("s8_tensorrt").findings if f["id"] == "tensorrt.missing"]
    assert plain["severity"] == "info", plain
    assert any(e["value"].startswith("nothing says so") for e in plain["evidence"]), plain["evidence"]
    sc = runs.SCENARIOS["s8_tensorrt"]
    asked = runs.run_diagnose(stack(sc.stack), {**sc.env(), "ORT_TENSORRT_FP16_ENABLE": "1"})
    [warned] = [f for f in asked.findings if f["id"] == "tensorrt.missing"]
    assert warned["severity"] == "warning", warned
    assert any("ORT_TENSORRT_FP16_ENABLE" in e["value"] for e in warned["evidence"]), warned["evidence"]


@pytest.mark.parametrize("scenario_id", ["s3_no_cuda", "s5_no_cudnn", "s9_cuda12_full_stack"])
def test_tensorrt_reported_for_every_gpu_build(diagnosis, scenario_id):
    diag = diagnosis(scenario_id)
    assert diag.with_cause("tensorrt_missing"), diag.describe()


# --- the CUDA 12 stack that gets further ------------------------------------------------------


def test_insufficient_driver_message_without_a_driver_is_driver_missing(diagnosis, ort):
    run = ort("s9_cuda12_full_stack")
    assert "CUDA failure 35" in run.output  # ONNX Runtime says "driver version is insufficient"
    diag = diagnosis("s9_cuda12_full_stack")
    assert diag.causes[0] == "driver_missing" or diag.findings[0]["layer"] == "config"
    _absent(
        diag,
        "driver_too_old",
        "cuda_runtime_missing",
        "cuda_major_mismatch",
        "cudnn_missing",
        "cudnn_major_mismatch",
    )
