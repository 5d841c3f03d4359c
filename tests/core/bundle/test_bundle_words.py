"""Redaction never corrupts the report: hosts gpu, cuda, host and user nvidia are names, not our words."""

from __future__ import annotations

import json
from typing import Any

import pytest
from bundle_plants import real_document
from fallback_doctor.core.bundle.export import prepare_bundle
from fallback_doctor.core.bundle.preview import BundleOptions
from fallback_doctor.core.redaction.redact import Redactor


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    document = real_document()
    document["environment"]["platform"]["node"] = "gpu"
    document["environment"]["target"] = {
        "kind": "bareun",
        "root": "/home/nvidia/bareun",
        "config_path": "/home/nvidia/bareun/config/bareun.json",
        "url": "http://host:5656/health",
        "hostname": "cuda",
    }
    return document


def _keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [key for key, item in value.items() for key in (key, *_keys(item))]
    if isinstance(value, list):
        return [key for item in value for key in _keys(item)]
    return []


def test_ordinary_word_names_leave_our_words_alone(document: dict[str, Any]) -> None:
    options = BundleOptions(hosts=("gpu", "cuda", "host"), users=("nvidia",), use_local_identity=False)
    preview = prepare_bundle(document, (), options)
    redacted = preview.document
    assert redacted["schema"] == document["schema"] == "gpu-fallback-doctor/report"
    assert redacted["verdict"] == document["verdict"]
    assert _keys(redacted) == _keys(document)
    for before, after in zip(document["findings"], redacted["findings"], strict=True):
        assert after["id"] == before["id"] and after.get("cause") == before.get("cause")
        assert after["title"] == before["title"] or "/home/" in before["title"]
    text = json.dumps(redacted)
    assert "/home/nvidia" not in text and "/home/user-" in text
    assert '"hostname": "cuda"' not in text and "http://host:" not in text
    assert redacted["environment"]["platform"]["node"].startswith("host-")


def test_a_bare_common_word_stays_but_the_name_in_place_goes() -> None:
    redactor = Redactor(hosts=("gpu",), users=("nvidia",), use_local_identity=False)
    text = "the gpu host=gpu ran /home/nvidia/x for NVIDIA CUDA on gpu_unusable"
    out = redactor.redact(text).text
    assert out.startswith("the gpu host=host-")
    assert "/home/user-" in out and "NVIDIA CUDA on gpu_unusable" in out


def test_learned_ordinary_words_are_not_spread_as_hosts() -> None:
    """The old redactor learned "provider" as a host from a log line and replaced it everywhere."""
    redactor = Redactor(use_local_identity=False)
    log = "server: provider\nFailed to create CUDAExecutionProvider. provider_bridge_ort.cc\n"
    redactor.learn(log)
    out = redactor.redact(log).text
    assert "CUDAExecutionProvider" in out and "provider_bridge_ort.cc" in out
