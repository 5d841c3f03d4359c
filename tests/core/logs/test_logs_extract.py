"""General extraction (core/readers/logs/extract.py) and logs as they really look (issue 25, items 2 and
4)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fallback_doctor.core.readers.logs.diagnose_log import explain_text
from fallback_doctor.core.readers.logs.extract import (
    TRIGGER,
    negated_providers,
    provider_names,
    trigger_lines,
)

CORPUS = next(
    (
        folder / "shared" / "corpus"
        for folder in Path(__file__).resolve().parents
        if (folder / "shared" / "corpus").is_dir()
    ),
    Path("/nonexistent/shared/corpus"),
)
CORPUS_FILES = [CORPUS / "dev.jsonl", CORPUS / "dev-2.jsonl"]
NEGATED = (
    "CUDAExecutionProvider is not in available providers (['AzureExecutionProvider', 'CPUExecutionProvider'])"
)


def test_a_provider_named_as_not_available_is_not_listed() -> None:
    """The sentence lists Azure and CPU; CUDA is what it says is missing (a CPU-only build)."""
    assert provider_names(NEGATED) == ("Azure", "CPU")
    assert negated_providers(NEGATED) == ("CUDA",)
    diagnosis = explain_text(NEGATED)
    assert diagnosis.facts.providers == ("Azure", "CPU")
    assert diagnosis.facts.gpu_provider_listed is False
    assert diagnosis.top.cause == "ep_not_in_build"
    unbracketed = (
        "Specified provider 'CUDAExecutionProvider' is not in available provider names. "
        "Available: 'CPUExecutionProvider'"
    )
    assert provider_names(unbracketed) == ("CPU",)
    curly = (
        "Specified provider ‘CUDAExecutionProvider’ is not in available provider names. "
        "Available: ‘CPUExecutionProvider’"
    )
    assert provider_names(curly) == ("CPU",)
    assert provider_names("Available providers: TensorrtExecutionProvider, CUDAExecutionProvider") == (
        "Tensorrt",
        "CUDA",
    )


@pytest.mark.parametrize(
    ("line", "cause", "library_family"),
    [
        (
            "MyApp.Native: Unable to find cuda lib under the names libcuda.so, libcuda.so.1",
            "driver_missing",
            "driver",
        ),
        ("[engine] loading cudnn64_9.dll failed (module could not be found)", "cudnn_missing", "cudnn"),
        ("warn: cannot open libcudnn_graph.so.9 -- skipping GPU", "cudnn_missing", "cudnn"),
        ("E0101 loader: libnvinfer.so.10 missing, TensorRT disabled", "tensorrt_missing", "tensorrt"),
        ("fatal: dlopen failed for libcublasLt.so.11 (needed by the provider)", None, "cuda"),
    ],
)
def test_an_unseen_shape_still_yields_library_and_family(
    line: str, cause: str | None, library_family: str
) -> None:
    """No catalogue signature knows these wordings; the library table and the mechanism do."""
    diagnosis = explain_text(line)
    top = diagnosis.top
    assert top.fields.get("family") == library_family
    assert top.fields.get("library")
    if cause is not None:
        assert top.cause == cause
    else:
        assert top.cause in ("cuda_runtime_missing", "cuda_major_mismatch")
        assert top.fields.get("needed_major") == "11"


def test_an_unseen_shape_with_a_windows_error_number() -> None:
    diagnosis = explain_text("App.exe: native load of cudnn_ops64_9.dll returned error 126")
    assert diagnosis.top.layer == "cudnn" and diagnosis.top.fields.get("errno") == "126"


def test_a_dll_of_no_known_family_is_a_windows_loader_failure() -> None:
    """The loader's own message ("The specified module could not be found": error 126)."""
    diagnosis = explain_text(
        "Failed to load dynamic library 'audio_engine.dll': The specified module could not be found."
    )
    assert diagnosis.top.cause == "windows_dll_load_error"
    assert diagnosis.top.fields.get("errno") == "126"


def test_a_provider_list_without_a_gpu_provider_leaves_two_causes_open() -> None:
    """A CPU-only package, or a CPU package beside the GPU one: the list alone cannot tell."""
    diagnosis = explain_text("Available providers: ['AzureExecutionProvider', 'CPUExecutionProvider']")
    assert diagnosis.outcome == "several_open"
    assert [c.cause for c in diagnosis.causes[:2]] == ["ep_not_in_build", "package_conflict"]
    assert diagnosis.top.confidence < 0.5


def test_an_error_name_in_any_wording() -> None:
    diagnosis = explain_text("worker 3 died: status=cudaErrorInsufficientDriver while creating the session")
    assert diagnosis.top.cause == "driver_too_old"
    status = explain_text("gpu backend: got CUDNN_STATUS_NOT_INITIALIZED from the handle")
    assert status.top.cause != "unknown"


def test_gpu_device_discovery_at_import_is_no_failure() -> None:
    """ONNX Runtime >= 1.23 prints this on hosts without a DRM vendor file; the GPU works."""
    line = (
        "2025-10-01 10:00:00.1 [W:onnxruntime:Default, device_discovery.cc:164 DiscoverDevicesForPlatform] "
        "GPU device discovery failed: device_discovery.cc:89 ReadFileContents Failed to open file: "
        '"/sys/class/drm/card0/device/vendor"'
    )
    diagnosis = explain_text(f"\x1b[0;93m{line}\x1b[m\nINFO model loaded\n")
    assert diagnosis.outcome == "no_failure"
    assert diagnosis.top.cause == "unknown"


def test_a_benign_log_gives_no_failure() -> None:
    log = (
        "2024-05-01 12:00:00 INFO starting\n"
        "[W:onnxruntime:, session_state.cc:1280 VerifyEachNodeIsAssignedToAnEp] Some nodes were not assigned "
        "to the preferred execution providers which may or may not have an negative impact on performance.\n"
        "providers: ['CUDAExecutionProvider', 'CPUExecutionProvider']\n"
    )
    diagnosis = explain_text(log)
    assert diagnosis.outcome == "no_failure"
    assert diagnosis.top.cause == "unknown" or diagnosis.top.confidence < 0.5


def _entries() -> list[dict[str, str]]:
    return [
        json.loads(raw)
        for path in CORPUS_FILES
        for raw in path.read_text(encoding="utf-8").splitlines()
        if raw
    ]


_ORT_LINE = re.compile(r"\[([EWIVF]):onnxruntime|(\[ONNXRuntimeError\])")
_COLOURS = {"E": "\x1b[1;31m", "F": "\x1b[1;31m", "W": "\x1b[0;93m", "I": "\x1b[0;32m", "V": "\x1b[0;37m"}


def _coloured(log: str) -> str:
    """ONNX Runtime's own colouring: its severity's colour before the line, a reset after it."""
    out = []
    for line in log.split("\n"):
        found = _ORT_LINE.search(line)
        out.append(f"{_COLOURS[found.group(1) or 'E']}{line}\x1b[m" if found else line)
    return "\n".join(out)


def _answer(log: str) -> tuple[str, list[tuple[str, float]]]:
    diagnosis = explain_text(log)
    return diagnosis.outcome, [(c.cause, round(c.confidence, 3)) for c in diagnosis.causes]


@pytest.mark.skipif(
    not all(path.is_file() for path in CORPUS_FILES), reason="shared corpus not beside the repository"
)
def test_ansi_colours_around_onnxruntime_lines_change_no_answer_over_the_whole_development_set() -> None:
    entries = _entries()
    coloured = 0
    for entry in entries:
        log = entry["log"]
        with_colour = _coloured(log)
        coloured += with_colour != log
        assert _answer(with_colour) == _answer(log), entry["id"]
    assert coloured >= 25  # the test colours real ONNX Runtime lines, not nothing


@pytest.mark.parametrize(
    ("line", "outcome"),
    [
        ("C:\\app\\classifier.exe (process 17992) exited with code -1073741701.", "named"),
        ("Process finished with exit code -1073741515 (0xC0000135)", "several_open"),
        ("subprocess.CalledProcessError: returned non-zero exit status 3221225785.", "several_open"),
    ],
)
def test_a_windows_exit_status_of_the_loader(line: str, outcome: str) -> None:
    """0xC000007B, 0xC0000135, 0xC0000139 in any of the three ways logs print them."""
    diagnosis = explain_text(line)
    assert diagnosis.top.cause == "windows_dll_load_error"
    assert diagnosis.outcome == outcome


def test_a_large_number_that_is_no_exit_status() -> None:
    assert explain_text("request 17 took 3221225781 ns").outcome == "no_failure"


_PREFIXES = (
    "[2025-03-04 10:11:12,345] ",  # Python logging on Windows
    "3/4/2025 10:11:12 AM ",  # .NET's default on an en-US Windows
    "Mar  4 10:11:12 gpu-host app[4242]: ",  # syslog
    "2025-03-04T10:11:12.345678Z stderr F ",  # a Kubernetes node's container log
    "app-1  | ",  # docker compose
)


def _prefixed(log: str, prefix: str) -> str:
    return "\n".join(prefix + line if line.strip() else line for line in log.split("\n"))


def _interleaved(log: str) -> str:
    """Another process's ordinary lines between every line of the log (its own tag on each),
    except inside a word that a terminal cut across two lines (ort-119 was copied so: another
    process writes between lines, never inside one)."""
    other = "Mar  4 10:11:12 gpu-host nginx[77]: 10.0.0.7 - - GET /healthz HTTP/1.1 200 2"
    lines = log.split("\n")
    out = []
    for line, after in zip(lines, [*lines[1:], ""], strict=True):
        cut_word = len(line) >= 60 and line[-1:].isalpha() and after[:1].islower()
        out.append(line if cut_word else f"{line}\n{other}")
    return "\n".join(out)


@pytest.mark.skipif(
    not all(path.is_file() for path in CORPUS_FILES), reason="shared corpus not beside the repository"
)
def test_time_stamps_and_interleaved_processes_change_no_answer_over_the_whole_development_set() -> None:
    for entry in _entries():
        log = entry["log"]
        expected = _answer(log)
        for prefix in _PREFIXES:
            assert _answer(_prefixed(log, prefix)) == expected, (entry["id"], prefix)
        assert _answer(_interleaved(log)) == expected, (entry["id"], "interleaved")


def test_versions_a_log_states_are_read_and_checked_against_the_tables() -> None:
    """ONNX Runtime 1.19 needs cuDNN 9 (resources/compat/ort_releases.json); cuDNN 8.9.7 beside a
    missing cuDNN library is a major mismatch."""
    log = "\n".join(
        [
            "torch 2.1.0+cu118",
            "onnxruntime version: 1.19.2",
            "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |",
            "cuDNN version: 8.9.7",
            "GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-0)",
            "Failed to load library libonnxruntime_providers_cuda.so with error: "
            "libcudnn_adv.so.9: cannot open shared object file: No such file or directory",
        ]
    )
    diagnosis = explain_text(log)
    facts = diagnosis.facts
    assert facts.ort_versions == ("1.19.2",)
    assert facts.driver_versions == ("535.104.05",)
    assert facts.cudnn_majors_seen == frozenset({8})
    assert (11, 8) in facts.cuda_versions
    assert facts.gpu_names == ("NVIDIA GeForce RTX 4090",)
    assert diagnosis.top.cause == "cudnn_major_mismatch"
    assert "rule.cudnn_version_contradicts_build" in diagnosis.top.signatures


def test_a_line_a_terminal_wrapped_is_read_as_one() -> None:
    """ONNX Runtime's loader error cut at 60 columns (a console copy): library, family and
    cause as unwrapped; the quote is the whole message, at its first line."""
    line = (
        "2025-11-08 19:02:18.488 [E:onnxruntime:Default, provider_bridge_ort.cc:1546 "
        "TryGetProviderInfo_CUDA] "
        "[ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: "
        "libcublasLt.so.11: cannot open shared object file: No such file or directory"
    )
    pieces = [line[at : at + 60] for at in range(0, len(line), 60)]
    whole, wrapped = explain_text(line), explain_text("\n".join(["INFO start", *pieces, "INFO next"]))
    assert [c.cause for c in wrapped.causes] == [c.cause for c in whole.causes]
    assert wrapped.top.fields.get("library") == "libcublasLt.so.11"
    assert wrapped.top.evidence[0].line == 2 and wrapped.top.evidence[0].text == line


def _hard_wrapped(log: str, width: int) -> str:
    """What a terminal of ``width`` columns shows, copied as text: each longer line cut into pieces."""
    return "\n".join(
        piece
        for line in log.split("\n")
        for piece in (
            [line] if len(line) <= width else [line[at : at + width] for at in range(0, len(line), width)]
        )
    )


@pytest.mark.skipif(
    not all(path.is_file() for path in CORPUS_FILES), reason="shared corpus not beside the repository"
)
@pytest.mark.parametrize("width", [80, 120])
def test_lines_a_terminal_wrapped_change_no_answer_over_the_whole_development_set(width: int) -> None:
    wrapped = 0
    for entry in _entries():
        log = entry["log"]
        cut = _hard_wrapped(log, width)
        wrapped += cut != log
        assert _answer(cut) == _answer(log), (entry["id"], width)
    assert wrapped >= (40 if width == 80 else 15)  # the test cuts real lines, not nothing


_DLL_INIT = (
    "ImportError: DLL load failed while importing onnxruntime_genai: "
    "A dynamic link library (DLL) initialization routine failed."
)
_NOT_AVAILABLE = (
    "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names."
    "Available providers: 'AzureExecutionProvider, CPUExecutionProvider'"
)


@pytest.mark.parametrize(
    ("line", "cut"),
    [
        (_DLL_INIT, 110),  # a captured field (the loader's message) runs into the cut
        (_NOT_AVAILABLE, 120),  # a quote opened before the cut closes after it
        (_NOT_AVAILABLE, 96),  # the first piece ends in a space ("names. |Available")
        (
            "[ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with "
            "error: libcudnn.so.9: cannot open shared object file: No such file or directory",
            101,  # a library name cut in two ("l|ibcudnn.so.9")
        ),
    ],
)
def test_a_line_wrapped_once_is_joined_where_the_cut_shows(line: str, cut: int) -> None:
    pieces = [line[:cut], line[cut:]]
    wrapped = explain_text("\n".join(pieces))
    assert _answer("\n".join(pieces)) == _answer(line)
    assert wrapped.top.evidence[0].text == line


def test_a_wide_line_and_a_shorter_one_stay_two_lines() -> None:
    """Any two lines of a log look like a line wrapped once: without a sign of the cut, each is its own."""
    failure = (
        "Failed to load library libonnxruntime_providers_cuda.so with error: "
        "libcudnn.so.9: cannot open shared object file: No such file or directory"
    )
    diagnosis = explain_text("\n".join([failure, "Falling back to CPUExecutionProvider."]))
    assert diagnosis.top.evidence[0].line == 1 and diagnosis.top.evidence[0].text == failure


def test_lines_of_one_width_are_not_taken_for_one_wrapped_line() -> None:
    """A server's request lines all have one width: each stays its own line."""
    failure = (
        "Failed to load library libonnxruntime_providers_cuda.so with error: "
        "libcublasLt.so.12: cannot open shared object file: No such file or directory"
    )
    request = "2026-01-04 10:00:02.117 INFO [worker-3] request served in 41 ms path=/v1/analyze status=200"
    diagnosis = explain_text("\n".join([failure, *[request] * 500, "done"]))
    assert diagnosis.top.evidence[0].line == 1 and diagnosis.top.evidence[0].text == failure


@pytest.mark.skipif(
    not all(path.is_file() for path in CORPUS_FILES), reason="shared corpus not beside the repository"
)
def test_the_lines_worth_a_closer_look_are_those_python_s_re_finds_over_the_development_set() -> None:
    """trigger_lines runs TRIGGER by RE2 over all lines at once: the same lines as ``re``, line by line."""
    found = 0
    for entry in _entries():
        texts = entry["log"].split("\n")
        expected = [index for index, text in enumerate(texts) if TRIGGER.search(text)]
        assert trigger_lines(texts) == expected, entry["id"]
        found += len(expected)
    assert found >= 80  # the test compares real lines, not nothing
