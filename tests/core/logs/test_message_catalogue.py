"""The message catalogue's conformance: every message entry says who prints it, in which releases,
with a real example that the engine matches to it, and no example line is claimed by two entries
with different mechanisms."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fallback_doctor.core.model.causes import layer_of
from fallback_doctor.core.readers.logs.mechanisms import contributions
from fallback_doctor.core.readers.logs.results import LogFacts
from fallback_doctor.core.readers.logs.separators import separator
from fallback_doctor.core.readers.logs.signatures import (
    RELEASES,
    Signature,
    SignatureError,
    check_origin,
    load_signatures,
    match_text,
)

BASE = load_signatures()
ROOT = Path(__file__).resolve().parents[3]
MESSAGE_KINDS = frozenset(
    {
        "direct",
        "missing_library",
        "library_version",
        "win_loader",
        "lookup",
        "requirement",
        "fallback",
        "benign",
    }
)
"""Kinds that stand for a message some project prints. ``context``, ``hidden`` and ``startup``
entries recognise shapes no one project prints (paths, banners, shell redirections)."""
FAILURE_KINDS = MESSAGE_KINDS - {"fallback", "benign"}
MESSAGES = [sig for sig in BASE.signatures if sig.kind in MESSAGE_KINDS or sig.origin]


@pytest.mark.parametrize("sig", MESSAGES, ids=lambda sig: sig.id)
def test_every_message_entry_has_an_origin_and_a_real_example(sig: Signature) -> None:
    origin = sig.origin
    assert origin, f"{sig.file}:{sig.id} has no origin (project, file, releases)"
    assert "/" in origin["project"], f"{sig.id}: project is owner/name"
    assert RELEASES.match(origin["releases"])
    assert sig.example.get("line", "").strip(), f"{sig.id}: no example line"
    assert sig.example.get("source", "").startswith("https://"), f"{sig.id}: example without a source URL"


@pytest.mark.parametrize("sig", MESSAGES, ids=lambda sig: sig.id)
def test_each_example_is_matched_to_its_own_entry_by_the_engine(sig: Signature) -> None:
    matched = [match.signature.id for match in match_text(sig.example["line"], BASE)]
    assert sig.id in matched, f"{sig.id} does not match its own example; the engine matched {matched}"


def _mechanism(sig_matches: list, line: str) -> dict[str, str]:  # type: ignore[type-arg]
    """Each failure entry matched on ``line`` with the layer of the first cause it gives (empty facts).

    The layer stands for the mechanism: a missing cuDNN is ``cudnn_missing`` or
    ``cudnn_major_mismatch`` by context, one mechanism; a driver cause and a package cause are two.
    """
    found: dict[str, str] = {}
    for match in sig_matches:
        if match.signature.kind not in FAILURE_KINDS or match.signature.generic:
            continue
        weights, _ = contributions(match, LogFacts(), BASE, line)
        if weights:
            found[match.signature.id] = str(layer_of(max(weights, key=lambda item: item.weight).cause))
    return found


def test_no_example_line_is_claimed_by_entries_of_different_mechanisms() -> None:
    conflicts = []
    for sig in MESSAGES:
        line = sig.example["line"]
        causes = _mechanism(match_text(line, BASE), line)
        if len(set(causes.values())) > 1:
            conflicts.append(f"{sig.id}: {causes}")
    assert not conflicts, "\n".join(conflicts)


@pytest.mark.parametrize(
    ("origin", "problem"),
    [
        ({"project": "microsoft/onnxruntime", "file": "x.cc"}, "no releases"),
        ({"project": "microsoft/onnxruntime", "file": "x.cc", "releases": "1.20"}, "not FIRST-LAST"),
        (
            {"project": "microsoft/onnxruntime", "file": "x.cc", "releases": "1.20-1.11"},
            "ends before it starts",
        ),
        ({"project": "", "file": "x.cc", "releases": "1.11-current"}, "no project"),
    ],
)
def test_a_bad_origin_is_refused(origin: dict[str, str], problem: str) -> None:
    with pytest.raises(SignatureError, match=problem):
        check_origin(origin, "test:entry")


def test_cuda_error_table_is_read_from_the_headers_and_names_resolve() -> None:
    table = json.loads((ROOT / "resources" / "compat" / "cuda_errors.json").read_text(encoding="utf-8"))
    runtime = {row["name"]: row for row in table["runtime"]}
    assert runtime["cudaErrorInsufficientDriver"]["number"] == 35
    assert (
        runtime["cudaErrorInsufficientDriver"]["text"]
        == "CUDA driver version is insufficient for CUDA runtime version"
    )
    assert runtime["cudaErrorStubLibrary"]["text"] == "CUDA driver is a stub library"
    assert {row["name"] for row in table["driver"]} >= {"CUDA_ERROR_NO_DEVICE", "CUDA_ERROR_STUB_LIBRARY"}
    names = BASE.tables["cuda_names"]
    for row in table["runtime"] + table["driver"]:
        if row["number"] != 0:
            assert names.get(row["name"]) == str(row["number"]), row["name"]


def test_counts_script_reproduces_the_document() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "catalogue_counts.py")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    document = (ROOT / "docs" / "log-catalogue.md").read_text(encoding="utf-8")
    assert out.strip() in document, "docs/log-catalogue.md is stale: rerun scripts/catalogue_counts.py"


def test_cudnn_status_table_tells_the_cudnn_major_by_number() -> None:
    table = json.loads(
        (ROOT / "resources" / "compat" / "cudnn_cublas_status.json").read_text(encoding="utf-8")
    )
    cudnn = {row["name"]: row for row in table["cudnn"]}
    internal = cudnn["CUDNN_STATUS_INTERNAL_ERROR"]
    assert (internal["number_8"], internal["number_9"], internal["text_9"]) == (
        4,
        4000,
        "CUDNN_STATUS_INTERNAL_ERROR",
    )
    assert cudnn["CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"]["number_9"] == 1008
    cublas = {row["name"]: row for row in table["cublas"]}
    assert cublas["CUBLAS_STATUS_ALLOC_FAILED"] == {
        "name": "CUBLAS_STATUS_ALLOC_FAILED",
        "number": 3,
        "releases": ["12.9", "13.5"],
        "text": "the resource allocation failed",
    }
    # Every cuDNN 9 sub-status the lookup table gives causes for exists in the headers read.
    for status in BASE.tables["cudnn_status"]:
        if not status.startswith("_"):
            assert f"CUDNN_STATUS_{status}" in cudnn, status


def _ranked_causes(sig: Signature) -> list[str]:
    """The causes an entry can give: its candidates, or every cause of its lookup table."""
    causes = [candidate.cause for candidate in sig.candidates]
    table = BASE.tables.get(sig.lookup.get("table", ""), {})
    for value in table.values():
        if isinstance(value, list):
            causes.extend(str(item["cause"]) for item in value if isinstance(item, dict))
    return causes


@pytest.mark.parametrize("sig", [sig for sig in MESSAGES if _ranked_causes(sig)], ids=lambda sig: sig.id)
def test_every_ranked_cause_has_the_check_that_tells_it_apart(sig: Signature) -> None:
    weights = [candidate.weight for candidate in sig.candidates]
    assert weights == sorted(weights, reverse=True), f"{sig.id}: candidates are not ranked"
    for cause in _ranked_causes(sig):
        if cause != "unknown":
            assert separator(cause, "en") and separator(cause, "ko"), f"{sig.id}: no separator for {cause}"


WINDOWS = json.loads(
    (ROOT / "resources" / "compat" / "windows_loader_errors.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize(
    ("number", "runtime", "line"),
    [(row["number"], runtime, line) for row in WINDOWS["errors"] for runtime, line in row["forms"].items()],
    ids=lambda value: str(value)[:24],
)
def test_each_windows_loader_error_form_is_recognised(number: int, runtime: str, line: str) -> None:
    """Every way Python, .NET, Java and ONNX Runtime word a loader error is matched as a failure."""
    failures = [match for match in match_text(line, BASE) if match.signature.kind in FAILURE_KINDS]
    assert failures, f"{number} as {runtime} is not recognised: {line}"


def _script(name: str):  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return __import__(name)
    finally:
        sys.path.pop(0)


def test_miner_ranges_and_inventory_filter() -> None:
    """The release range a probe gets, and which wheel strings the inventory keeps."""
    mine = _script("catalogue_mine_ort")
    releases = ["1.11", "1.12", "1.13"]
    assert mine.release_range(["1.12", "1.13"], releases) == "1.12-current"
    assert mine.release_range(["1.11", "1.12"], releases) == "1.11-1.12"
    kept = mine.inventory(
        ["1.20", "1.21"],
        [
            "Failed to load library libonnxruntime_providers_cuda.so\nif provider == 'cuda': fail()",
            "Failed to load library libonnxruntime_providers_cuda.so\nAdding default CPU execution provider.",
        ],
    )
    assert kept == [
        {"text": "Failed to load library libonnxruntime_providers_cuda.so", "releases": ["1.20", "1.21"]}
    ]


def test_header_enums_are_read_with_their_first_doc_sentence() -> None:
    header = (
        "enum __device_builtin__ cudaError\n{\n    /**\n"
        "     * The API call returned with no errors. In the case\n     */\n    cudaSuccess = 0,\n"
        "    /** This indicates that the installed NVIDIA CUDA driver is older. More. */\n"
        "    cudaErrorInsufficientDriver = 35,\n};\n"
    )
    items = _script("catalogue_cuda_errors").enum_items(header, "enum __device_builtin__ cudaError", "cuda")
    assert items == [
        ("cudaSuccess", 0, "The API call returned with no errors"),
        ("cudaErrorInsufficientDriver", 35, "This indicates that the installed NVIDIA CUDA driver is older"),
    ]
    status = _script("catalogue_status_codes").enum_values(
        "typedef enum { CUDNN_STATUS_SUCCESS = 0, CUDNN_STATUS_INTERNAL_ERROR = 4000, } cudnnStatus_t;",
        "CUDNN_STATUS_",
    )
    assert status == {"CUDNN_STATUS_SUCCESS": 0, "CUDNN_STATUS_INTERNAL_ERROR": 4000}
