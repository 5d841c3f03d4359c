"""Output digests, latency statistics, the CPU comparison, and node placement from the VERBOSE log.

The standard library only (no numpy): percentiles by linear interpolation, as numpy's default.
"""

from __future__ import annotations

import array
import hashlib
import re
import struct

from .api import ELEMENT_TYPES, Output

try:  # imported as fallback_doctor.core.readers.probes.capi_probe
    from ..probe_shared import count_placements
    from ..probe_shared import latency as latency
except (ImportError, ValueError):  # run by path (3.8 raises ValueError): capi_probe is top-level
    from probe_shared import count_placements  # type: ignore[import-not-found,no-redef]
    from probe_shared import latency as latency  # type: ignore[no-redef]


def numbers(output: Output) -> list[float] | None:
    """The values of a numeric output as floats, or None for a type we do not decode."""
    _name, code, size = ELEMENT_TYPES.get(output["element"], ("", "", 0))
    data = output["data"]
    if not code or not size:
        return None
    if code == "e":
        return list(struct.unpack("<%de" % (len(data) // 2), data))
    values = array.array(code)
    values.frombytes(data)
    return [float(v) for v in values]


def digest(output: Output) -> dict[str, object]:
    """An OutputDigest: sha256 of the raw bytes, mean, largest magnitude, the first values."""
    values = numbers(output)
    result: dict[str, object] = {
        "name": output["name"],
        "dtype": output["dtype"],
        "shape": output["shape"],
        "sha256": hashlib.sha256(output["data"]).hexdigest(),
        "mean": None,
        "abs_max": None,
        "head": [],
    }
    if values:
        finite = [v for v in values if v == v and abs(v) != float("inf")]
        result["mean"] = sum(finite) / len(finite) if finite else None
        result["abs_max"] = max(abs(v) for v in finite) if finite else None
        result["head"] = values[:8]
    return result


def compare(gpu: list[Output], cpu: list[Output], tol_abs: float, tol_rel: float) -> dict[str, object]:
    """OutputComparison: |gpu - cpu| <= abs + rel * |cpu| everywhere, same names, dtypes, shapes."""
    result: dict[str, object] = {
        "equal": False,
        "bitwise_equal": False,
        "max_abs_diff": None,
        "max_rel_diff": None,
        "tolerance_abs": tol_abs,
        "tolerance_rel": tol_rel,
        "detail": "",
    }

    def signature(outputs: list[Output]) -> list[tuple[str, str, list[int]]]:
        return [(o["name"], o["dtype"], o["shape"]) for o in outputs]

    if signature(gpu) != signature(cpu):
        result["detail"] = "the outputs differ in names, types or shapes from the CPU baseline's"
        return result
    bitwise = all(g["data"] == c["data"] for g, c in zip(gpu, cpu))  # noqa: B905 (Python 3.8)
    max_abs = 0.0
    max_rel = 0.0
    equal = True
    details = []
    for g, c in zip(gpu, cpu):  # noqa: B905 (Python 3.8)
        gv, cv = numbers(g), numbers(c)
        if gv is None or cv is None:
            if g["data"] != c["data"]:
                equal = False
                details.append("%s differs (compared as bytes)" % g["name"])
            continue
        for a, b in zip(gv, cv):  # noqa: B905 (Python 3.8)
            diff = abs(a - b)
            if diff != diff:  # NaN in one of them
                if not (a != a and b != b):
                    equal = False
                continue
            max_abs = max(max_abs, diff)
            if b != 0:
                max_rel = max(max_rel, diff / abs(b))
            if diff > tol_abs + tol_rel * abs(b):
                equal = False
        if not equal and not details:
            details.append("%s differs beyond the tolerance" % g["name"])
    result.update(
        equal=equal,
        bitwise_equal=bitwise,
        max_abs_diff=max_abs,
        max_rel_diff=max_rel,
        detail="; ".join(details),
    )
    return result


# --- node placement from the VERBOSE log ----------------------------------------------------------

PLACEMENT_ALL = re.compile(r"All nodes placed on \[(\w+)\]\. Number of nodes: (\d+)")
PLACEMENT_SOME = re.compile(r"Node\(s\) placed on \[(\w+)\]\. Number of nodes: (\d+)")
ORT_MESSAGE = re.compile(r"\[(W|E|F):onnxruntime")


def nodes_per_provider(lines: list[str]) -> dict[str, int]:
    """Count nodes per provider from ONNX Runtime's VERBOSE "Node placements" lines."""
    return count_placements("\n".join(lines))


def untimed(line: str) -> str:
    """A log line without its timestamp (to drop repeats of the same message)."""
    return line[line.find("[") :] if "[" in line else line


def ort_messages(lines: list[str]) -> list[str]:
    """ONNX Runtime's own warning, error and fatal lines, as it wrote them."""
    return [line.strip() for line in lines if ORT_MESSAGE.search(line)][:50]
