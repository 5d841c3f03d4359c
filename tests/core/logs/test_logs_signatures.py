"""The signature base: well formed, every example matches, no input makes a pattern slow."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fallback_doctor.core.language.texts import catalogue
from fallback_doctor.core.model.causes import Cause
from fallback_doctor.core.platform.resource_files import RESOURCES
from fallback_doctor.core.readers.logs.signatures import (
    KINDS,
    classify_library,
    library_major,
    load_signatures,
    match_text,
)
from hypothesis import given, settings
from hypothesis import strategies as st

BASE = load_signatures()
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))


@pytest.mark.parametrize("sig", BASE.signatures, ids=lambda sig: sig.id)
def test_every_signature_matches_its_own_example(sig) -> None:  # type: ignore[no-untyped-def]
    example = sig.example
    assert example.get("line"), f"{sig.id}: no example line"
    assert example.get("source", "").startswith("https://"), f"{sig.id}: no source URL"
    assert sig.says == f"log_says.{sig.id}"
    assert all(catalogue(lang, "labels").get(sig.says) for lang in ("en", "ko")), f"{sig.id}: no words"
    matched = [match.signature.id for match in match_text(example["line"], BASE)]
    assert sig.id in matched, f"{sig.id} does not match its example; matched {matched}"


def test_cause_texts_cover_every_gpu_stack_cause_in_two_languages() -> None:
    """A cause's words are labels of the catalogues; its source stays with the English."""
    english = json.loads((RESOURCES / "texts" / "en" / "labels" / "log_causes.json").read_text("utf-8"))
    gpu_causes = list(Cause)[: list(Cause).index(Cause.UNKNOWN) + 1]
    for cause in gpu_causes:
        keys = BASE.causes[str(cause)]
        assert english.get(f"_source.log_cause.{cause}"), cause
        for lang in ("en", "ko"):
            words = catalogue(lang, "labels")
            assert all(words.get(keys[part]) for part in ("title", "explanation", "fix")), (cause, lang)


def test_the_signature_files_hold_no_words() -> None:
    """Every text of resources/signatures/ is in the catalogues (scripts/move_signature_words.py)."""
    from move_signature_words import main

    assert main(["--check"]) == 0


def test_candidate_causes_are_known_codes() -> None:
    for sig in BASE.signatures:
        for candidate in sig.candidates:
            Cause(candidate.cause)
    for name, table in BASE.tables.items():
        for key, value in table.items():
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, dict):
                        assert Cause(item["cause"]), f"{name}:{key}"


@pytest.mark.parametrize(
    ("name", "family", "major", "stack_major"),
    [
        ("libcublasLt.so.11", "cuda", 11, 11),
        ("cublasLt64_12.dll", "cuda", 12, 12),
        ("libcudart.so.11.0", "cuda", 11, 11),
        ("cudart64_110.dll", "cuda", 11, 11),
        ("libcufft.so.10", "cuda", 10, 11),
        ("nvrtc64_120_0.dll", "cuda", 12, 12),
        ("libcudnn_ops.so.9.1.0", "cudnn", 9, 9),
        ("cudnn_cnn_infer64_8.dll", "cudnn", 8, 8),
        ("libnvinfer.so.8.6.1", "tensorrt", 8, 8),
        ("nvinfer_10.dll", "tensorrt", 10, 10),
        ("libcuda.so.1", "driver", 1, 1),
        ("nvcuda.dll", "driver", None, None),
        ("zlibwapi.dll", "zlibwapi", None, None),
        ("vcruntime140_1.dll", "msvc", None, None),
        ("C:\\x\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll", "ort_provider", None, None),
    ],
)
def test_library_families(name: str, family: str, major: int | None, stack_major: int | None) -> None:
    info = classify_library(name, BASE)
    assert (info.family, info.major, info.stack_major) == (family, major, stack_major)


def test_pre_cuda_11_soname_pins_the_minor() -> None:
    assert classify_library("libcublas.so.10.0", BASE).minor_in_name
    assert not classify_library("libcudart.so.11.0", BASE).minor_in_name
    assert library_major("cudart64_101.dll") == (10, True)


ADVERSARIAL = [
    "a" * 200_000,
    "lib" + "a." * 100_000 + "so",
    "Could not load library " + "x." * 100_000,
    "LoadLibrary failed with error 126 " + '"' * 100_000,
    "Failed to load " + "a" * 100_000 + ".dll error code",
    "[" * 100_000 + "ExecutionProvider'",
    " " * 100_000 + "[" + "'CPUExecutionProvider'," * 20_000,
    "DLL load failed: " + "é" * 100_000,
    "\\[WinError 126\\]" * 20_000,
    "cudaError" + "A" * 100_000,
    "CUDNN_STATUS_" + "A" * 100_000,
    "undefined symbol: " + "a" * 100_000 + ", version lib",
    "Unable to load any of {" + "lib" * 50_000,
    'depends on "' + "a" * 100_000 + " which is missing",
]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_long_adversarial_lines_complete(text: str) -> None:
    match_text(text, BASE)


@pytest.mark.timeout(60)
def test_every_pattern_on_its_keywords_repeated() -> None:
    for sig in BASE.signatures:
        for word in sig.keywords:
            match_text((word + " a.b ") * 2000, BASE)
            match_text(word + "x" * 20_000, BASE)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=3000))
def test_matching_any_text_never_raises(text: str) -> None:
    for match in match_text(text, BASE):
        assert match.signature.kind in KINDS


KEYWORDS = sorted({word for sig in BASE.signatures for word in sig.keywords})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(KEYWORDS), st.text(max_size=40)), max_size=30))
def test_keyword_soup_never_raises(parts: list[str]) -> None:
    match_text(" ".join(parts), BASE)
