"""Follow the advice on copies of the real broken stacks until ONNX Runtime itself agrees.

For each scenario: copy the cached stack (hard links, cheap), run ``diagnose --json --quick`` on
the copy, apply the steps of the first finding that is not about the driver or the device (the
one thing this machine, which has no GPU, cannot fix) with ``apply_steps`` (mechanically, from the
JSON), diagnose again; at most three rounds. Then ONNX Runtime, asked for CUDA on that copy with
its verbose log, must fail only on the driver (``libcuda.so.1``), and the diagnosis must report
only driver and device findings among its errors and warnings.

TensorRT (a provider not asked for here) is followed only in its own scenario, where the
package its remedy names (tensorrt-cu13==10.*) cannot be installed here: TensorRT's wheels on the
index are stubs that download the libraries from pypi.nvidia.com at install time, which this
machine cannot reach. That scenario proves the remedy names a package that is not installed,
pinned to the major the provider loads, and that the CUDA path is whole.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import scenario_runs as runs
import scenario_stacks as stacks
from apply_steps import Applied, StepRefusedError, apply_finding, first_steps

pytestmark = [pytest.mark.scenario, pytest.mark.slow]

MAX_ROUNDS = 3
HARDWARE = ("driver", "device")

#: scenario id -> (stack, loader path relative to site-packages, whether TensorRT is followed)
FOLLOWED: dict[str, tuple[str, tuple[str, ...]]] = {
    "s1_cpu_only": ("cpu-only", ()),
    "s2_conflict": ("gpu-and-cpu", ()),
    "s2b_conflict_gpu_last": ("cpu-and-gpu", ()),
    "s3_no_cuda": ("gpu13-bare", ()),
    "s4_wheels_not_on_path": ("gpu13-cuda13-wheels", ()),
    "s5_no_cudnn": ("gpu13-cuda13-wheels", (runs.CU13_LIB,)),
    "s6_cuda12_build_cuda13_libs": ("gpu12-cuda13-wheels", (runs.CU13_LIB,)),
    "s6b_cuda13_build_cuda12_libs": ("gpu13-cuda12-wheels", runs.CU12_LIBS),
    # issue 27: cuDNN for CUDA 13 shares nvidia/cudnn with the CUDA 12 one the advice installs
    "s6c_cuda12_build_full_cuda13": ("gpu12-cuda13-full", (runs.CU13_LIB, "nvidia/cudnn/lib")),
    "s8_tensorrt": ("gpu13-full", (runs.CU13_LIB, "nvidia/cudnn/lib")),
}

_ORT_VERBOSE = """
import sys, onnxruntime as ort
o = ort.SessionOptions(); o.log_severity_level = 0
try:
    s = ort.InferenceSession(sys.argv[1], o, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    print("SESSION_PROVIDERS", s.get_providers())
except Exception as exc:
    print("SESSION_FAILED", type(exc).__name__, exc)
"""


def _copy(stack: stacks.Stack, dest: Path) -> Path:
    subprocess.run(["cp", "-a", "--link", str(stack.path), str(dest)], check=True, timeout=300)
    return dest / "bin" / "python"


def _diagnose(python: Path, env: dict[str, str]) -> runs.Diagnosis:
    cmd = [*runs.tool_command(), "diagnose", "--python", str(python), "--json", "--quick"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=False)
    return runs.Diagnosis(json.loads(proc.stdout), proc.returncode, proc.stderr, cmd)


def _followable(diag: runs.Diagnosis, follow_tensorrt: bool) -> dict[str, Any] | None:
    for finding in diag.findings:
        if finding["severity"] == "info" or finding["layer"] in HARDWARE:
            continue
        if finding["layer"] == "tensorrt" and not follow_tensorrt:
            continue
        return finding
    return None


def _ort_says(python: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(
        [str(python), "-c", _ORT_VERBOSE, str(runs.MODEL)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    return proc.stdout + proc.stderr


#: How ONNX Runtime says it stopped at the driver: the provider library cannot open libcuda.so.1
#: (1.31: it is in its DT_NEEDED), or the CUDA runtime, loaded, finds no driver to open (1.23:
#: cudart opens libcuda.so.1 itself and reports error 35).
_DRIVER_WORDS = re.compile(
    r"(libcuda\.so\.1: cannot open shared object file[^\n]*"
    r"|CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version)"
)


def _said(output: str) -> str:
    found = _DRIVER_WORDS.search(output)
    if found:
        return found.group(1)
    lines = [
        line for line in output.splitlines() if "cannot open shared object file" in line or "EP Error" in line
    ]
    return (lines or output.strip().splitlines() or ["(nothing)"])[0].strip()


#: The stacks whose wheels the advice installs (ONNX Runtime 1.31.1 / 1.23.2, the CUDA 13 and 12
#: sets, cuDNN for both): built first, so the offline installs find them in the cache on a new
#: machine too (CI once ran these tests before gpu13-full was built: "nvidia-cudnn-cu13 was not
#: found in the cache").
CACHED_FOR_THE_ADVICE = ("gpu13-full", "gpu12-full")


@pytest.mark.parametrize("scenario_id", sorted(FOLLOWED))
def test_following_the_advice_leaves_only_the_driver(scenario_id, stack, tmp_path, capsys):
    for needed in CACHED_FOR_THE_ADVICE:
        stack(needed)
    stack_name, ld_path = FOLLOWED[scenario_id]
    python = _copy(stack(stack_name), tmp_path / "copy")
    copy_site = next((tmp_path / "copy" / "lib").glob("python3.*/site-packages"))
    env = stacks.clean_env()
    if ld_path:
        env["LD_LIBRARY_PATH"] = ":".join(str(copy_site / p) for p in ld_path)
    follow_tensorrt = scenario_id == "s8_tensorrt"
    if follow_tensorrt:  # the application asks for TensorRT (else its absence is only information)
        env["ORT_TENSORRT_FP16_ENABLE"] = "1"
    applied = Applied(env)
    verify_lines: list[str] = []
    rounds = 0
    tensorrt_checked = False
    diag = _diagnose(python, applied.env)
    while (finding := _followable(diag, follow_tensorrt)) is not None:
        if follow_tensorrt and finding["layer"] == "tensorrt":
            run = [s for s in first_steps(finding) if s["kind"] == "run"]
            assert run and run[0]["argv"][0] == str(python), finding
            installed = {d["name"].lower() for d in diag.doc["environment"]["python"]["distributions"]}
            name, _, pin = run[0]["argv"][4].partition("==")
            assert name.lower() not in installed, finding
            # pinned to the provider's major (libnvinfer.so.10): unpinned, pip would take TensorRT 11
            assert pin == "10.*", finding
            why = "TensorRT's pip wheels are stubs that download from pypi.nvidia.com, unreachable here"
            applied.not_done.append("run: " + " ".join(run[0]["argv"]) + f" ({why})")
            tensorrt_checked = True
            break
        assert rounds < MAX_ROUNDS, f"still {finding['id']} after {rounds} rounds\n{diag.describe()}"
        before = set(runs._CANNOT_OPEN.findall(_ort_says(python, applied.env))) - {"libcuda.so.1"}
        try:
            apply_finding(finding, python, applied)
        except StepRefusedError as exc:
            pytest.fail(f"round {rounds + 1}, {finding['id']}: {exc}\n{diag.describe()}")
        rounds += 1
        verify_lines += re.findall(r"`(ldd [^`]+)`", (finding.get("remediation") or {}).get("verify") or "")
        # One finding's steps are a whole fix: the library ONNX Runtime could not open before is
        # opened after them (an install without its loader-path step left libcublasLt.so.13 failing).
        after = set(runs._CANNOT_OPEN.findall(_ort_says(python, applied.env)))
        assert not before & after, (
            f"round {rounds}, {finding['id']}: ONNX Runtime still cannot open {before & after}"
        )
        diag = _diagnose(python, applied.env)
    said = _ort_says(python, applied.env)
    with capsys.disabled():
        print(f"\n[{scenario_id}] rounds={rounds}")
        for line in applied.done + [f"(not applied) {n}" for n in applied.not_done]:
            print(f"  {line}")
        print(f"  ONNX Runtime: {_said(said)}")
        print(f"  findings left: {[f['id'] for f in diag.findings if f['severity'] != 'info']}")
    assert tensorrt_checked == follow_tensorrt, "the TensorRT remedy was not reached"
    missing = set(runs._CANNOT_OPEN.findall(said))
    assert missing <= {"libcuda.so.1"}, said[-3000:]
    assert _DRIVER_WORDS.search(said), said[:3000]
    left = {f["layer"] for f in diag.findings if f["severity"] != "info"}
    # TensorRT's step is checked, not applied (its wheels download from NVIDIA's index): it stays.
    left -= {"tensorrt"} if tensorrt_checked else set()
    assert left <= set(HARDWARE), diag.describe()
    assert left & set(HARDWARE), diag.describe()
    # The verify lines of the advice followed hold on this machine, which has no driver (issue 27:
    # `ldd ... | grep "not found"` "must print nothing" never did while libcuda.so.1 was listed).
    for line in verify_lines:
        printed = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=applied.env)
        assert printed.stdout == "", f"{line}\n{printed.stdout}"
    # cuDNN's wheels for CUDA 12 and 13 share nvidia/cudnn: both installed is a mix of two majors' files
    installed = {d["name"].lower() for d in diag.doc["environment"]["python"]["distributions"]}
    assert len(installed & {"nvidia-cudnn-cu12", "nvidia-cudnn-cu13"}) <= 1, sorted(installed)


def test_a_bareun_libpath_with_a_cpu_only_runtime_gets_steps_for_that_server(tmp_path):
    """Not followed to the end: its remedy fetches ONNX Runtime's GPU release archive, and this
    machine is offline. The steps are checked instead: the exact archive of the library's own
    version, unpacked into that libPath on the host, no pip and no bare ``python``."""
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "core" / "targets"))
    from bareun_layout import make_install

    root = make_install(tmp_path)
    cmd = [*runs.tool_command(), "diagnose", "--target", "bareun", "--bareun-root", str(root)]
    proc = subprocess.run(
        [*cmd, "--json", "--quick"], capture_output=True, text=True, timeout=300, check=False
    )
    doc = json.loads(proc.stdout)
    [finding] = [f for f in doc["findings"] if f["id"] == "target.libpath_cpu_only"]
    steps = first_steps(finding)
    assert [s["kind"] for s in steps] == ["run", "run", "manual"], steps
    fetch, unpack = steps[0]["argv"], steps[1]["argv"]
    assert fetch[-1].endswith("/v1.23.2/onnxruntime-linux-x64-gpu-1.23.2.tgz")
    assert str(root / "lib") in unpack and all(s.get("where") == "host" for s in steps[:2])
    assert "pip" not in json.dumps(finding["remediation"])
    assert not any(c.startswith("python ") for c in finding["remediation"]["commands"])


def _release_archive(version: str, directory: Path) -> Path:
    """``onnxruntime-linux-x64-gpu-VERSION.tgz`` as the release lays it out (``NAME/lib/`` with the
    ``libonnxruntime.so -> .so.1 -> .so.VERSION`` links), made from the same version's GPU wheel.

    STANDS IN FOR THE DOWNLOAD (this machine is offline): the files are the wheel's C library and
    provider libraries of that version, not the release archive's own bytes. Built once, cached
    outside the clone.
    """
    import sys
    import tarfile

    sys.path.insert(0, str(Path(__file__).parents[1] / "core" / "loader"))
    from loader_wheels import CACHE, wheel_dir

    name = f"onnxruntime-linux-x64-gpu-{version}"
    cached = CACHE / "release-archives" / f"{name}.tgz"
    if not cached.is_file():
        capi = wheel_dir("ort" + "".join(version.split(".")[:2])) / "onnxruntime" / "capi"
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".partial{__import__('os').getpid()}")
        with tarfile.open(partial, "w:gz", compresslevel=1) as archive:
            for library in sorted(capi.glob("libonnxruntime*.so*")):
                archive.add(library, f"{name}/lib/{library.name}")
            for link, points_to in (
                ("libonnxruntime.so.1", f"libonnxruntime.so.{version}"),
                ("libonnxruntime.so", "libonnxruntime.so.1"),
            ):
                entry = tarfile.TarInfo(f"{name}/lib/{link}")
                entry.type, entry.linkname = tarfile.SYMTYPE, points_to
                archive.addfile(entry)
        partial.rename(cached)
    placed = directory / cached.name
    placed.symlink_to(cached)
    return placed


def test_a_bareun_libpath_followed_until_onnxruntime_itself_stops_at_the_driver(tmp_path, capsys):
    """The Bareun advice followed to the end on a real Bareun-like installation.

    Round 1: the libPath finding's steps run as printed (tar into that libPath, on the host);
    only the download is stood in for (by the same version's files from its GPU wheel, see
    ``_release_archive``). ONNX Runtime itself, driven through its C API by the test inference,
    then no longer says "not enabled in this build": its CUDA provider loads as far as its CUDA 12
    libraries. Round 2 on: the next finding's steps (for a native server: NVIDIA's wheels with
    ``pip --target`` into a folder of the server's, that folder on its loader path), applied
    mechanically (pip offline from the stacks' cache). At the end ONNX Runtime must stop only at
    the driver, and only driver and device findings may be left; the old log, written before the
    change, is reported as an earlier state, not as a cause.
    """
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "core" / "targets"))
    from bareun_layout import make_install

    for needed in CACHED_FOR_THE_ADVICE:
        stacks.build(stacks.STACKS[needed])
    root = make_install(tmp_path)
    cmd = [*runs.tool_command(), "diagnose", "--target", "bareun", "--bareun-root", str(root), "--json"]
    applied = Applied(stacks.clean_env())

    def diagnose(*extra: str) -> dict[str, Any]:
        proc = subprocess.run([*cmd, *extra], capture_output=True, text=True, env=applied.env, timeout=600)
        return json.loads(proc.stdout)

    before = diagnose("--quick")
    [finding] = [f for f in before["findings"] if f["id"] == "target.libpath_cpu_only"]
    fetch, unpack, restart = first_steps(finding)
    url = fetch["argv"][-1]
    assert fetch["argv"][:2] == ["curl", "-fLO"], fetch
    assert url.startswith("https://github.com/microsoft/onnxruntime/releases/download/v1.23.2/")
    work = tmp_path / "downloads"
    work.mkdir()
    assert _release_archive("1.23.2", work).name == url.rsplit("/", 1)[-1]  # what curl -O would write
    subprocess.run(unpack["argv"], cwd=work, check=True, timeout=300)  # the printed command, as printed
    assert restart["kind"] == "manual"  # "Restart the server": no server runs here
    applied.done.append("run (host): " + " ".join(unpack["argv"]))
    rounds = 1
    diag = runs.Diagnosis(diagnose("--quick"), 0, "", cmd)
    assert "target.libpath_cpu_only" not in [f["id"] for f in diag.findings], diag.describe()
    while (finding := _followable(diag, False)) is not None:
        assert rounds < MAX_ROUNDS, f"still {finding['id']} after {rounds} rounds\n{diag.describe()}"
        steps = first_steps(finding)
        for step in (s for s in steps if s["kind"] == "run" and "pip" in s["argv"]):
            assert step["where"] == "host" and "--target" in step["argv"], step  # no environment of its own
        try:
            apply_finding(finding, None, applied)
        except StepRefusedError as exc:
            pytest.fail(f"round {rounds + 1}, {finding['id']}: {exc}\n{diag.describe()}")
        rounds += 1
        diag = runs.Diagnosis(diagnose("--quick"), 0, "", cmd)
    after = diagnose()
    as_is = next(s for s in after["inference"]["gpu_retry"]["strategies"] if s["name"] == "as_is")
    said = json.dumps(as_is)
    with capsys.disabled():
        print(f"\n[bareun libPath] rounds={rounds}")
        for line in applied.done + [f"(not applied) {n}" for n in applied.not_done]:
            print(f"  {line}")
        print(f"  ONNX Runtime: {_said(said)}")
    assert "not enabled in this build" not in said
    assert set(runs._CANNOT_OPEN.findall(said)) <= {"libcuda.so.1"}, said[:3000]
    assert _DRIVER_WORDS.search(said), said[:3000]
    left = {f["layer"] for f in after["findings"] if f["severity"] != "info"}
    assert left and left <= set(HARDWARE), [(f["id"], f["layer"]) for f in after["findings"]]
    assert "log.outdated" in [f["id"] for f in after["findings"]]


@pytest.mark.parametrize("form", [{"provider": "cpu"}, "cpu"])
def test_a_bareun_configured_for_the_cpu_asks_for_the_gpu_once_its_config_step_is_applied(tmp_path, form):
    """The configuration's own step (the file's form: {"provider": "cuda"} or "gpu"), applied as
    printed: the next diagnosis no longer says the CPU was asked for, and the file still parses."""
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "core" / "targets"))
    from bareun_layout import SAMPLE_CONFIG, make_install

    root = make_install(tmp_path, lib="cpu", config=dict(SAMPLE_CONFIG, executionProvider=form))
    cmd = [*runs.tool_command(), "diagnose", "--target", "bareun", "--bareun-root", str(root)]
    cmd += ["--json", "--quick"]
    env = stacks.clean_env()

    def diagnose() -> dict[str, Any]:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=180, check=False)
        document: dict[str, Any] = json.loads(done.stdout)
        return document

    before = diagnose()
    assert before["verdict"] == "cpu_by_configuration"
    applied = Applied(env)
    apply_finding(before["findings"][0], None, applied)
    after = diagnose()
    assert after["verdict"] != "cpu_by_configuration", applied.done
    assert not [f for f in after["findings"] if f["layer"] == "config" and f["severity"] == "error"]
    assert applied.not_done and applied.not_done[0].startswith("manual: Restart")
