"""The stack page's words: what was found, what is missing and what is needed agree with each other
(issue 13: "found: 13 · needs: 13.x" read as a contradiction; "found: ?" said nothing).

The Bareun case is a real inspection of a Bareun-like installation (onnxruntime-node's real CPU-only
library); the partial CUDA case is a document fragment shaped as the library collector writes it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.flow.step_child import run_inspection
from fallback_doctor.core.language.texts import label
from fallback_doctor.core.views.pages_stack import layer_line, layer_parts, stack_layers

sys.path.insert(0, str(Path(__file__).resolve().parent / "targets"))

from bareun_layout import make_install


def _resolution(name: str, path: str | None, version: str | None = None) -> dict[str, Any]:
    return {"name": name, "path": path, "version": version}


def _partial_cuda_document() -> dict[str, Any]:
    """ONNX Runtime needs CUDA 13 and cuDNN 9; only libcudart.so.13 is on the loader path."""
    resolutions = [
        _resolution("libcublasLt.so.13", None),
        _resolution("libcublas.so.13", None),
        _resolution("libcurand.so.10", None),
        _resolution("libcudart.so.13", "/usr/local/cuda-13.0/lib/libcudart.so.13", "13"),
        _resolution("libcudnn.so.9", None),
    ]
    return {
        "target": {"kind": "python"},
        "environment": {
            "onnxruntime": {
                "version": "1.31.1",
                "required_cuda_major": 13,
                "required_cudnn_major": 9,
                "providers_in_build": [
                    "TensorrtExecutionProvider",
                    "CUDAExecutionProvider",
                    "CPUExecutionProvider",
                ],
            },
            "libraries": {"reports": [{"resolutions": resolutions}]},
            "driver": {"nvml_status": "library_not_found"},
            "python": {"version": "3.11.7"},
        },
        "findings": [{"id": "cuda.libs_missing", "layer": "cuda", "severity": "error"}],
    }


def test_a_partly_found_cuda_says_how_much_was_found_what_is_missing_and_what_is_needed() -> None:
    layers = {layer["layer"]: layer for layer in stack_layers(_partial_cuda_document())}
    cuda = layer_parts(layers["cuda"], "en")
    assert cuda["found"] == "found: 13 (1 of 4 libraries)"
    assert cuda["missing"] == "missing: libcublasLt.so.13, libcublas.so.13 and 1 more"
    assert cuda["needs"] == "needs: CUDA 13.x"
    assert layer_parts(layers["cudnn"], "en") == {
        "found": "found: none",
        "needs": "needs: cuDNN 9.x",
        "missing": "",
    }
    driver = layer_line(layers["driver"], "en")
    assert driver == "found: no driver   ·   needs: a driver that runs CUDA 13"
    assert layer_line(layers["onnxruntime"], "en") == "found: 1.31.1, GPU providers: CUDA, TensorRT"
    assert layer_line(layers["application"], "en") == "found: Python 3.11.7"
    korean = layer_parts(layers["cuda"], "ko")
    assert korean["found"] == "발견: 13 (라이브러리 4개 중 1개)"
    assert korean["missing"] == "없음: libcublasLt.so.13, libcublas.so.13 외 1개"


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_cpu_only_bareun_says_what_was_not_checked_and_why(tmp_path: Path, lang: str) -> None:
    root = make_install(tmp_path, lib="cpu", log=None)
    document = run_inspection({"kind": "bareun", "bareun_root": str(root)})
    layers = {layer["layer"]: layer for layer in stack_layers(document)}
    lines = {name: layer_line(layer, lang) for name, layer in layers.items()}
    for name in ("cuda", "cudnn"):
        assert layers[name]["status"] == "unknown" and layers[name]["unchecked"] == "not_required", name
    if lang == "en":
        assert lines["cuda"] == "this ONNX Runtime asks for no CUDA library"  # under "not checked"
        assert lines["onnxruntime"] == "found: 1.23.2, a CPU-only build (no GPU provider)"
        assert lines["application"] == "found: Bareun server   ·   asks for: cuda"
        assert lines["driver"].startswith("found: no driver") or "found: " in lines["driver"]
    assert all("?" not in line and line for line in lines.values()), lines


@pytest.mark.scenario
@pytest.mark.parametrize(
    ("scenario_id", "layer_name", "finding_id"),
    [
        ("s4_wheels_not_on_path", "cuda", "cuda.runtime_not_on_loader_path"),
        ("s5b_cudnn_not_on_path", "cudnn", "cudnn.not_on_loader_path.lazy"),
    ],
)
def test_a_card_says_installed_not_on_the_loader_path_as_its_finding_does(
    scenario_id: str, layer_name: str, finding_id: str
) -> None:
    """Issue 26: the CUDA card said "missing: libcublasLt.so.13 …" and cuDNN "found: none" for
    libraries the finding on the same page says are installed but not on the loader path; a
    technician skimming the cards reinstalled CUDA. The real scenario stacks, diagnosed by the CLI."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
    import scenario_runs as runs
    import scenario_stacks as stacks

    scenario = runs.SCENARIOS[scenario_id]
    stack = stacks.STACKS[scenario.stack]
    stacks.build(stack)
    document = runs.run_diagnose(stack, scenario.env()).doc
    layer = next(item for item in stack_layers(document) if item["layer"] == layer_name)
    assert finding_id in [finding["id"] for finding in layer["findings"]]
    assert layer["unreachable"] and not layer["missing"], layer
    for lang, words in (("en", "not on the loader path"), ("ko", "로더가 찾지 못함")):
        line = layer_line(layer, lang)
        assert words in line, line
        assert label("stack.found_none", lang) not in line, line
        assert label("stack.missing_list", lang, names="").strip() not in line, line
