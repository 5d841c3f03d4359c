"""The OrtApi table as data, and the self-contained child's indices agree with it."""

from __future__ import annotations

import ast
from pathlib import Path

from fallback_doctor.core.readers.inference import capi_layout
from fallback_doctor.core.readers.inference.capi import child_script


def _child_indices() -> dict[str, int]:
    """API_INDEX from the child's source (it is run by path, never imported)."""
    table = Path(child_script()).parent / "capi_probe" / "api.py"
    tree = ast.parse(table.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "API_INDEX" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, dict)
            return value
    raise AssertionError("API_INDEX not found in the child")


def test_table_has_unique_names_and_known_anchors() -> None:
    names = capi_layout.ORT_API_FUNCTIONS
    assert len(names) == len(set(names)) == 226
    # Anchors from the header: the first three, Run, and the CUDA V2 group (since 1.11).
    assert names[:3] == ("CreateStatus", "GetErrorCode", "GetErrorMessage")
    assert capi_layout.api_index("Run") == 9
    assert capi_layout.api_index("ReleaseStatus") == 93
    assert capi_layout.api_index("SessionOptionsAppendExecutionProvider_CUDA_V2") == 204
    assert names[-1] == "MemoryInfoGetDeviceType"
    assert "ORT_API_VERSION 13" in capi_layout.HEADER_SOURCE


def test_child_indices_agree_with_the_header_table() -> None:
    indices = _child_indices()
    assert indices, "the child calls no function?"
    for name, index in indices.items():
        assert capi_layout.api_index(name) == index, name
