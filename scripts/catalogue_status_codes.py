"""Build resources/compat/cudnn_cublas_status.json: cuDNN and cuBLAS status codes, read from the wheels.

cuDNN 9: ``cudnnStatus_t`` of include/cudnn_graph.h, each text from ``cudnnGetErrorString`` of the
wheel's libcudnn_graph.so.9. cuBLAS: ``cublasStatus_t`` of include/cublas_api.h, each text from
``cublasGetStatusString`` of the wheel's libcublas. cuDNN 8 (no wheel read here): the numbering of
cudnn_ops_infer_v8.h as NVIDIA's TensorRT copies it (plugin/common/cudnnWrapper.h), kept below.

By hand: ``python scripts/catalogue_status_codes.py OUT.json --cudnn 9.13=DIR --cudnn 9.28=DIR
--cublas 12.9=DIR:libcublas.so.12 --cublas 13.5=DIR:libcublas.so.13`` (DIR holds include/ and lib/).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import re
from pathlib import Path
from typing import Any

CUDNN8 = {
    "SUCCESS": 0,
    "NOT_INITIALIZED": 1,
    "ALLOC_FAILED": 2,
    "BAD_PARAM": 3,
    "INTERNAL_ERROR": 4,
    "INVALID_VALUE": 5,
    "ARCH_MISMATCH": 6,
    "MAPPING_ERROR": 7,
    "EXECUTION_FAILED": 8,
    "NOT_SUPPORTED": 9,
    "LICENSE_ERROR": 10,
    "RUNTIME_PREREQUISITE_MISSING": 11,
    "RUNTIME_IN_PROGRESS": 12,
    "RUNTIME_FP_OVERFLOW": 13,
    "VERSION_MISMATCH": 14,
}
"""cuDNN 8's cudnnStatus_t (cudnn_ops_infer_v8.h; NVIDIA/TensorRT plugin/common/cudnnWrapper.h)."""


def enum_values(header: str, prefix: str) -> dict[str, int]:
    """Literal ``NAME = number`` members of the enum whose names start with ``prefix``."""
    return {
        name: int(number) for name, number in re.findall(rf"\b({prefix}[A-Z0-9_]+)\s*=\s*([0-9]+)", header)
    }


def _library(path: Path, function: str, *preload: Path) -> Any:
    for dependency in preload:
        ctypes.CDLL(str(dependency))
    library = ctypes.CDLL(str(path))
    getattr(library, function).restype = ctypes.c_char_p
    return getattr(library, function)


def build(cudnn: dict[str, Path], cublas: dict[str, tuple[Path, str]]) -> dict[str, Any]:
    """The table: per code its number, the releases that define it and the library's text."""
    cudnn_rows: dict[str, dict[str, Any]] = {}
    for release, folder in cudnn.items():
        header = (folder / "include" / "cudnn_graph.h").read_text(encoding="utf-8")
        text_of = _library(folder / "lib" / "libcudnn_graph.so.9", "cudnnGetErrorString")
        for name, number in enum_values(header, "CUDNN_STATUS_").items():
            row = cudnn_rows.setdefault(name, {"name": name, "number_9": number, "releases_9": []})
            row["releases_9"].append(release)
            row["text_9"] = text_of(number).decode()
    for short, number in CUDNN8.items():
        row = cudnn_rows.setdefault(f"CUDNN_STATUS_{short}", {"name": f"CUDNN_STATUS_{short}"})
        row["number_8"] = number
    cublas_rows: dict[str, dict[str, Any]] = {}
    for release, (folder, soname) in cublas.items():
        header = (folder / "include" / "cublas_api.h").read_text(encoding="utf-8")
        lt = folder / "lib" / soname.replace("libcublas", "libcublasLt")
        text_of = _library(folder / "lib" / soname, "cublasGetStatusString", lt)
        for name, number in enum_values(header, "CUBLAS_STATUS_").items():
            entry = cublas_rows.setdefault(name, {"name": name, "number": number, "releases": []})
            entry["releases"].append(release)
            entry["text"] = text_of(number).decode()
    return {
        "_source": "cuDNN 9 status codes from include/cudnn_graph.h of the nvidia-cudnn-cu12 wheels "
        + ", ".join(cudnn)
        + " (text_9: cudnnGetErrorString of that wheel); cuDNN 8 numbers (number_8) from "
        "cudnn_ops_infer_v8.h as "
        "NVIDIA's TensorRT plugin code copies it. cuDNN 9 renumbered the codes by category (1xxx "
        "uncategorised, 2xxx bad parameter, 3xxx not supported, 4xxx internal, 5xxx execution), so ONNX "
        "Runtime's 'CUDNN failure N: NAME' tells the cuDNN major by N. cuBLAS status codes from "
        "include/cublas_api.h of the CUDA " + ", ".join(cublas) + " wheels (text: cublasGetStatusString). "
        "Regenerate: scripts/catalogue_status_codes.py.",
        "cudnn": sorted(cudnn_rows.values(), key=lambda row: (row.get("number_9", 99999), row["name"])),
        "cublas": sorted(cublas_rows.values(), key=lambda row: row["number"]),
    }


def main(argv: list[str] | None = None) -> int:
    """Write the table from the wheels named on the command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--cudnn", action="append", default=[], help="RELEASE=DIR")
    parser.add_argument("--cublas", action="append", default=[], help="RELEASE=DIR:SONAME")
    args = parser.parse_args(argv)
    cudnn = {item.split("=", 1)[0]: Path(item.split("=", 1)[1]) for item in args.cudnn}
    cublas = {}
    for item in args.cublas:
        release, rest = item.split("=", 1)
        folder, soname = rest.rsplit(":", 1)
        cublas[release] = (Path(folder), soname)
    table = build(cudnn, cublas)
    args.out.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(len(table["cudnn"]), len(table["cublas"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
