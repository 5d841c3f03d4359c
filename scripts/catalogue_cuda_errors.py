"""Build resources/compat/cuda_errors.json from the NVIDIA CUDA runtime wheels.

Reads ``cudaError_t`` (include/driver_types.h) and ``CUresult`` (include/cuda.h) of each wheel and
calls that wheel's ``cudaGetErrorString`` (libcudart, no GPU needed) for every runtime code's text.

By hand: ``pip download nvidia-cuda-runtime-cu11 nvidia-cuda-runtime-cu12 'nvidia-cuda-runtime==13.*'
--no-deps``, unzip each, then ``python scripts/catalogue_cuda_errors.py OUT.json 11.8=DIR:libcudart.so.11.0
12.9=DIR:libcudart.so.12 13.5=DIR:libcudart.so.13`` (DIR holds include/ and lib/).
"""

from __future__ import annotations

import ctypes
import json
import re
import sys
from pathlib import Path
from typing import Any

ITEM = re.compile(r"(?:/\*\*(?P<doc>(?:(?!\*/).)*)\*/\s*)?(?P<name>{prefix}\w+)\s*=\s*(?P<num>\d+)", re.S)


def enum_items(source: str, start: str, prefix: str) -> list[tuple[str, int, str]]:
    """(name, number, first sentence of the doc comment) of one C enum."""
    begin = source.index(start)
    body = source[begin : source.index("}", begin)]
    items = []
    for found in re.finditer(ITEM.pattern.replace("{prefix}", prefix), body, re.S):
        doc = " ".join((found.group("doc") or "").replace("*", " ").split())
        doc = re.sub(r"\\ref\s+\S+|\\p\s+|\\note|\\deprecated", "", doc)
        first = re.split(r"(?<=[a-z)])\.\s", doc)[0].strip().rstrip(".")
        items.append((found.group("name"), int(found.group("num")), first))
    return items


def _span(releases: list[str], newest: str) -> str:
    return f"{releases[0]}-{'current' if releases[-1] == newest else releases[-1]}"


def build(wheels: dict[str, tuple[Path, str]]) -> dict[str, Any]:
    """The table: runtime codes with their texts per release, driver codes with their docs."""
    runtime: dict[str, dict[str, Any]] = {}
    driver: dict[str, dict[str, Any]] = {}
    for release, (folder, soname) in wheels.items():
        library = ctypes.CDLL(str(folder / "lib" / soname))
        library.cudaGetErrorString.restype = ctypes.c_char_p
        source = (folder / "include" / "driver_types.h").read_text(encoding="utf-8")
        for name, number, doc in enum_items(source, "enum __device_builtin__ cudaError", "cuda"):
            row = runtime.setdefault(name, {"name": name, "number": number, "texts": {}, "releases": []})
            row["releases"].append(release)
            row["texts"][release] = library.cudaGetErrorString(number).decode()
            row["doc"] = doc
        header = (folder / "include" / "cuda.h").read_text(encoding="utf-8")
        for name, number, doc in enum_items(header, "typedef enum cudaError_enum", "CUDA_"):
            entry = driver.setdefault(name, {"name": name, "number": number, "releases": []})
            entry["releases"].append(release)
            entry["doc"] = doc
    newest = list(wheels)[-1]
    rows = []
    for row in sorted(runtime.values(), key=lambda item: item["number"]):
        out = {"number": row["number"], "name": row["name"], "releases": _span(row["releases"], newest)}
        out["text"] = row["texts"][row["releases"][-1]]
        if len(set(row["texts"].values())) > 1:
            out["texts_by_release"] = row["texts"]
        out["doc"] = row["doc"]
        rows.append(out)
    return {
        "_source": "cudaError_t (driver_types.h) and CUresult (cuda.h) as shipped in the NVIDIA CUDA runtime "
        "wheels of CUDA " + ", ".join(wheels) + ". Each runtime error's text is what cudaGetErrorString() of "
        "that wheel's libcudart returns (called, not copied); doc is the first sentence of the header's "
        "comment. releases: the CUDA releases read whose headers define the name ('current' = still in the "
        "newest wheel read). CUresult texts (cuGetErrorString) live in the driver library, which no wheel "
        "ships, so only the header's doc is kept. Regenerate: scripts/catalogue_cuda_errors.py.",
        "releases_read": list(wheels),
        "runtime": rows,
        "driver": [
            {
                "number": e["number"],
                "name": e["name"],
                "releases": _span(e["releases"], newest),
                "doc": e["doc"],
            }
            for e in sorted(driver.values(), key=lambda item: item["number"])
        ],
    }


def main(argv: list[str]) -> int:
    """Write the table to argv[0] from the RELEASE=DIR:SONAME arguments that follow."""
    wheels = {}
    for argument in argv[1:]:
        release, rest = argument.split("=", 1)
        folder, soname = rest.rsplit(":", 1)
        wheels[release] = (Path(folder), soname)
    table = build(wheels)
    Path(argv[0]).write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(len(table["runtime"]), len(table["driver"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
