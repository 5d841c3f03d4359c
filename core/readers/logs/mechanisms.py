"""Mechanisms: what a missing library, a loader error or a matched signature means.

A library's name gives its family (cuda, cudnn, tensorrt, driver, zlibwapi, msvc, ort) and its
major; a missing CUDA or cuDNN library is both ``*_missing`` and ``*_major_mismatch``, ranked
by context: another major seen in the log, or required by ONNX Runtime, or a soname pinned to a
pre-11 minor, or a major older than the current one all favour the mismatch; otherwise the
library is most likely just absent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fallback_doctor.core.readers.logs.results import LogFacts
from fallback_doctor.core.readers.logs.signatures import (
    LibraryInfo,
    Match,
    SignatureBase,
    Weighted,
    classify_library,
)

# ---------------------------------------------------------------------------------------------
# Mechanisms: what a missing library or a loader error means


def family_candidates(
    info: LibraryInfo,
    facts: LogFacts,
    base: SignatureBase,
    *,
    errno: str | None = None,
) -> list[Weighted]:
    """Candidate causes for a library of a known family that could not be loaded.

    CUDA and cuDNN: both the missing and the major-mismatch cause, ranked by context (see the
    module docstring). Other families: their one cause (and its secondary ones).
    """
    family = base.families.get(info.family or "")
    if family is None:
        return [Weighted("windows_dll_load_error", 0.3)] if info.name.lower().endswith(".dll") else []
    if errno == "1455":
        return [Weighted("out_of_memory", 0.5)]
    if errno == "127":
        if family.name in ("cuda", "cudnn"):
            return [Weighted(family.mismatch, 0.6), Weighted("windows_dll_load_error", 0.4)]
        return [Weighted("windows_dll_load_error", 0.6)]
    if family.name not in ("cuda", "cudnn"):
        return [Weighted(family.missing, 0.85), *family.also]
    major = info.stack_major
    seen = facts.cuda_majors_seen if family.name == "cuda" else frozenset()
    required = facts.required_cuda_major if family.name == "cuda" else facts.required_cudnn_major
    if major is None:
        weights = (0.55, 0.4)
    elif seen - {major}:
        weights = (0.4, 0.8)
    elif required is not None and required != major:
        weights = (0.4, 0.7)
    elif info.minor_in_name or (family.current_major is not None and major < family.current_major):
        weights = (0.5, 0.6)
    else:
        weights = (0.65, 0.45)
    result = [Weighted(family.missing, weights[0]), Weighted(family.mismatch, weights[1])]
    if family.name == "cudnn" and info.major == 8 and info.name.lower().endswith(".dll"):
        # cuDNN 8 on Windows loads zlibwapi.dll at run time (compat-reference 3.2): a cuDNN 8
        # DLL that will not load is often that.
        result.append(Weighted("zlibwapi_missing", 0.45))
    return result


def _synthetic(family: str, major: int | None) -> LibraryInfo:
    return LibraryInfo(f"<{family} library>", family, family, major, False, major)


def _scaled(items: Iterable[Weighted], factor: float) -> list[Weighted]:
    return [Weighted(item.cause, item.weight * factor) for item in items]


def loader_candidates(
    errno: str | None, target: str | None, facts: LogFacts, base: SignatureBase
) -> list[Weighted]:
    """Candidate causes for a Windows loader error number on a target DLL (or module)."""
    table = base.tables.get("windows_errors", {})
    if errno is not None and isinstance(table.get(errno), list):
        return [Weighted(str(item["cause"]), float(item["weight"])) for item in table[errno]]
    info = classify_library(target, base) if target else None
    family = info.family if info else None
    if errno in (None, "126"):
        if info is None or family == "ort_provider":
            if target and "tensorrt" in target.lower():
                return [Weighted("tensorrt_missing", 0.6), Weighted("cuda_runtime_missing", 0.3)]
            return provider_dependency_candidates(facts, base)
        if family == "ort_core":
            return [Weighted("windows_dll_load_error", 0.6), Weighted("package_conflict", 0.2)]
        if family is not None:
            return family_candidates(info, facts, base, errno="126")
        return [Weighted("windows_dll_load_error", 0.5)]
    if errno == "127":
        if info is not None:
            return family_candidates(info, facts, base, errno="127")
        return [Weighted("windows_dll_load_error", 0.6)]
    return [Weighted("windows_dll_load_error", 0.4)]


def provider_dependency_candidates(facts: LogFacts, base: SignatureBase) -> list[Weighted]:
    """ONNX Runtime's CUDA provider library did not load and no dependency is named.

    Any of its dependencies: cuDNN and the CUDA libraries, scaled by how often each is the
    missing one (the ``provider_dll_not_loaded`` table of windows.json, with its reasons).
    """
    table = base.tables.get("provider_dll_not_loaded", {})
    cuda = family_candidates(_synthetic("cuda", facts.required_cuda_major), facts, base)
    cudnn = family_candidates(_synthetic("cudnn", facts.required_cudnn_major), facts, base)
    return [
        *_scaled(cudnn, float(table.get("cudnn", 0.5))),
        *_scaled(cuda, float(table.get("cuda", 0.75))),
        Weighted("windows_dll_load_error", float(table.get("windows_dll_load_error", 0.25))),
    ]


_PROVIDER_LIBRARY = re.compile(r"onnxruntime_providers_(?P<provider>[a-z_]{2,30}?)(?:64)?[._]", re.IGNORECASE)
_NOT_FOUND_WORDS = ("cannot open shared object", "no such file", "not found", "is missing", "126")


def _unknown_dependency(text: str, facts: LogFacts, base: SignatureBase) -> list[Weighted]:
    """A library of no known family failed while a provider library was being loaded.

    The provider named on the line gives the stack: the TensorRT provider's dependencies are
    TensorRT's, the CUDA provider's are CUDA's or cuDNN's.
    """
    found = _PROVIDER_LIBRARY.search(text)
    provider = found.group("provider").lower() if found else ""
    if provider == "tensorrt":
        return [Weighted("tensorrt_missing", 0.6), Weighted("cuda_runtime_missing", 0.2)]
    if provider == "cuda":
        return provider_dependency_candidates(facts, base)
    return []


def _sub_library_dependency(info: LibraryInfo, text: str, facts: LogFacts) -> list[Weighted]:
    """A cuDNN sub-library that "could not load" without saying it is absent.

    cuDNN loads its sub-libraries (cudnn_cnn_infer, cudnn_ops, ...) itself; when one is
    present but fails, its own dependency is missing: libcuda.so.1 (under WSL it lives in
    /usr/lib/wsl/lib, off the default path) or a CUDA library such as libnvrtc or libcublasLt.
    """
    if info.family != "cudnn" or "_" not in info.name.lower().split("cudnn", 1)[-1][:2]:
        return []
    lowered = text.lower()
    if any(word in lowered for word in _NOT_FOUND_WORDS):
        return []
    return [
        Weighted("driver_missing", 0.7 if facts.wsl else 0.35),
        Weighted("cuda_runtime_missing", 0.25),
    ]


def _impossible_size(fields: dict[str, str], base: SignatureBase) -> bool:
    """A requested allocation larger than any GPU holds: a corrupted size, not memory running out."""
    size = fields.get("size")
    limit = base.tables.get("allocation_limits", {}).get("bytes")
    return size is not None and size.isdigit() and isinstance(limit, int) and int(size) > limit


def _errno_from_message(message: str, base: SignatureBase) -> str | None:
    lowered = message.lower()
    for number, phrases in base.tables.get("windows_messages", {}).items():
        if number.startswith("_") or not isinstance(phrases, list):
            continue
        if any(str(phrase).lower() in lowered for phrase in phrases):
            return number
    return None


def _lookup(match: Match, base: SignatureBase) -> list[Weighted]:
    spec = match.signature.lookup
    key = match.fields.get(spec.get("field", ""))
    table = base.tables.get(spec.get("table", ""), {})
    if key is None:
        return []
    folded = {str(k).lower(): v for k, v in table.items()}
    value = folded.get(key.lower())
    then = spec.get("then")
    if then is not None and isinstance(value, str):
        folded_then = {str(k).lower(): v for k, v in base.tables.get(then, {}).items()}
        value = folded_then.get(value.lower())
    if not isinstance(value, list):
        return []
    return [Weighted(str(item["cause"]), float(item["weight"])) for item in value]


def contributions(
    match: Match, facts: LogFacts, base: SignatureBase, text: str = ""
) -> tuple[list[Weighted], dict[str, str]]:
    """The weights one matched signature gives to causes, and the fields worth keeping."""
    sig = match.signature
    fields = dict(match.fields)
    if sig.kind == "direct":
        if sig.id == "ort.provider_not_available" and fields.get("provider", "").startswith("Tensorrt"):
            return [Weighted("ep_not_in_build", 0.6), Weighted("tensorrt_missing", 0.3)], fields
        if _impossible_size(fields, base):
            fields["impossible_size"] = fields["size"]
            return [], fields
        return list(sig.candidates), fields
    if sig.kind == "lookup":
        return _lookup(match, base), fields
    if sig.kind in ("missing_library", "library_version"):
        info = classify_library(fields.get("lib", ""), base)
        fields.update(library=info.name, family=info.family or "unknown")
        if info.stack_major is not None:
            fields["needed_major"] = str(info.stack_major)
        if sig.kind == "library_version":
            family = base.families.get(info.family or "")
            if family is not None and family.name in ("cuda", "cudnn"):
                return [Weighted(family.mismatch, 0.7)], fields
            return [Weighted("windows_dll_load_error", 0.4)], fields
        if info.family is None:
            # A library of no known family: the provider it was loaded for says which stack;
            # a DLL of no family that will not load is a Windows loader failure of its own.
            return _unknown_dependency(text, facts, base) or family_candidates(info, facts, base), fields
        candidates = family_candidates(info, facts, base, errno=fields.get("errno"))
        return candidates + _sub_library_dependency(info, text, facts), fields
    if sig.kind == "win_loader":
        errno = fields.get("errno") or _errno_from_message(fields.get("message", ""), base)
        target = fields.get("target", "").strip('"') or None
        if errno:
            fields["errno"] = errno
        if sig.id.startswith("general."):
            fields.pop("message", None)  # the whole line (core/readers/logs/extract.py): quoted already
        if target:
            info = classify_library(target, base)
            fields.update(library=info.name, family=info.family or "unknown")
            if info.stack_major is not None:
                fields["needed_major"] = str(info.stack_major)
        return loader_candidates(errno, target, facts, base), fields
    if sig.kind == "requirement":
        cuda = family_candidates(_synthetic("cuda", facts.required_cuda_major), facts, base)
        cudnn = family_candidates(_synthetic("cudnn", facts.required_cudnn_major), facts, base)
        return [*_scaled(cuda, 0.5), *_scaled(cudnn, 0.4)], fields
    return [], fields
