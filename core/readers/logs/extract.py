"""General extraction before any pattern: what a line names, whatever its wording.

A message shape no signature knows still names things the mechanisms understand:

- a library file (``libcublasLt.so.12``, ``cublasLt64_12.dll``, ``cudnn64_9.dll``,
  ``libcudnn.9.dylib``) beside a failure phrase ("cannot open", "not found", "failed to load",
  "LoadLibrary", "error 126"): its family and major come from the library table
  (resources/signatures/libraries.json), its causes from the family's mechanism;
- an error name (``cudaErrorInsufficientDriver``, ``CUDA_ERROR_NO_DEVICE``,
  ``CUDNN_STATUS_NOT_INITIALIZED``): looked up in the bundled error tables;
- a Windows loader error number beside a DLL (``error 126``, ``code 127``), and the Windows
  exit status of a process the loader stopped (``exited with code -1073741515``:
  0xC0000135, resources/compat/windows_status.json);
- provider lists, with the providers a sentence names as *not* available taken out
  ("CUDAExecutionProvider is not in available providers (['CPUExecutionProvider'])" lists
  the CPU provider only).

The extracted items become matches of general signatures (ids ``general.*``) that go through
the same mechanisms as the catalogue's; a line a catalogue signature already explains gives
nothing more here. By hand: ``grep -n -i -E '\\.(so|dll|dylib)|cudaError|CUDA_ERROR_' app.log``.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from itertools import accumulate
from typing import Any

from fallback_doctor.core.platform.resource_files import RESOURCES
from fallback_doctor.core.readers.logs.signatures import Match, Signature, SignatureBase, Weighted

_FAILURE = re.compile(
    r"cannot open|can ?not (?:be )?(?:found|load|find|locate)"
    r"|could ?n[o']t (?:be )?(?:load|found|find|locate|open)"
    r"|no such file|not found|failed to (?:load|open|find)|unable to (?:load|find|open|locate)"
    r"|error (?:while )?loading|loadlibrary|dlopen|is missing|missing|not loaded|not installed"
    r"|image not found|error(?: code)?:? ?(?:126|127|193|1114)\b",
    re.IGNORECASE,
)
_LIBRARY = re.compile(
    r"(?<![A-Za-z0-9_+\-.])"
    r"((?:lib)?[A-Za-z][A-Za-z0-9_+\-]{1,80}"
    r"(?:\.so(?:\.[0-9]{1,6}){0,4}|\.dll|(?:\.[0-9]{1,6}){0,3}\.dylib))"
    r"(?![A-Za-z0-9_])",
    re.IGNORECASE,
)
_ERROR_NAME = re.compile(r"\b(cudaError[A-Za-z]{2,60}|CUDA_ERROR_[A-Z_]{2,60})\b")
_CUDNN_STATUS = re.compile(r"\bCUDNN_STATUS_([A-Z_]{3,60})\b")
_WIN_ERRNO = re.compile(r"\b(?:error|code|errno)\b[ :=(]{0,3}(126|127|193|1114|1455)\b", re.IGNORECASE)
_PROVIDER = re.compile(r"([A-Za-z]{2,40})ExecutionProvider")
_NEGATED = re.compile(
    r"^['\"‘’“”]?\s{0,3}(?:is not|isn't|was not|are not|not (?:in|available|found|supported|enabled)"
    r"|unavailable|could not|cannot)",
    re.IGNORECASE,
)
_BRACKETED = re.compile(r"[\[(]([^\[\]()]{0,800}ExecutionProvider[^\[\]()]{0,800})[\])]")
_NTSTATUS = re.compile(
    r"\b0x(C0[0-9A-F]{6})\b|(?:exit|code|status|returned)[^0-9\n]{0,20}?(?:(-10[67][0-9]{7})|\b(32[0-9]{8}))\b",
    re.IGNORECASE,
)
TRIGGER = re.compile(
    r"\.so\b|\.so\.[0-9]|\.dll\b|\.dylib\b|cudaError|CUDA_ERROR_|CUDNN_STATUS_|0xC0|-10[67][0-9]{7}|\b32[0-9]{8}\b",
    re.IGNORECASE,
)
"""Lines worth a closer look (one search over all lines finds them)."""


def trigger_lines(texts: Sequence[str]) -> list[int]:
    """Indexes of the lines that name a library file or an error name (one search over all)."""
    starts = [end + index for index, end in enumerate(accumulate(map(len, texts), initial=0))]
    joined = "\n".join(texts)
    hits = _trigger_search().finditer(joined)
    return sorted({bisect.bisect_right(starts, hit.start()) - 1 for hit in hits})


@cache
def _trigger_search() -> Any:
    """``TRIGGER`` run by RE2 (seven times faster here on 4,000 lines; its ``\\b`` is ASCII's),
    else by ``re``."""
    try:
        import re2  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover - a declared dependency
        return TRIGGER
    return re2.compile("(?i)" + TRIGGER.pattern)


def provider_names(text: str) -> tuple[str, ...]:
    """The providers a line lists as available, without those it names as not available.

    A bracketed list wins (``[...]`` or ``(...)``, the form Python prints); otherwise every
    provider named, except one followed by "is not (in|available)…".
    """
    bracketed = _BRACKETED.findall(text)
    if bracketed:
        return tuple(name for group in bracketed for name in _PROVIDER.findall(group))
    return tuple(
        hit.group(1)
        for hit in _PROVIDER.finditer(text)
        if not _NEGATED.search(text[hit.end() : hit.end() + 40])
    )


def negated_providers(text: str) -> tuple[str, ...]:
    """Providers a line names as not available ("CUDAExecutionProvider is not in ...")."""
    return tuple(
        hit.group(1) for hit in _PROVIDER.finditer(text) if _NEGATED.search(text[hit.end() : hit.end() + 40])
    )


def _general(sig_id: str, kind: str, lookup: dict[str, str] | None = None) -> Signature:
    return Signature(
        id=sig_id,
        kind=kind,
        pattern=re.compile("(?!)"),
        keywords=("",),
        lookup=lookup or {},
        generic=False,
        file="core/readers/logs/extract.py",
    )


@cache
def _signatures() -> dict[str, Signature]:
    return {
        "library": _general("general.library_failure", "missing_library"),
        "cuda_name": _general(
            "general.cuda_error_name",
            "lookup",
            {"field": "name", "table": "cuda_names", "then": "cuda_codes"},
        ),
        "cudnn_status": _general(
            "general.cudnn_status", "lookup", {"field": "status", "table": "cudnn_status"}
        ),
        "loader": _general("general.loader_error", "win_loader"),
    }


@cache
def _status_signatures() -> dict[str, Signature]:
    """One general signature per Windows exit status of resources/compat/windows_status.json."""
    document = json.loads(
        RESOURCES.joinpath("compat").joinpath("windows_status.json").read_text(encoding="utf-8")
    )
    result = {}
    for code, entry in document["statuses"].items():
        signature = _general(f"general.windows_status.{entry['name']}", "direct")
        weights = tuple(Weighted(str(item["cause"]), float(item["weight"])) for item in entry["candidates"])
        result[code.upper()] = replace(signature, candidates=weights)
    return result


def windows_status(text: str) -> str | None:
    """The NTSTATUS a line names as an exit code, as 8 hex digits (``C0000135``), if known."""
    for hit in _NTSTATUS.finditer(text):
        hexed, signed, unsigned = hit.groups()
        value = hexed.upper() if hexed else f"{int(signed or unsigned) & 0xFFFFFFFF:08X}"
        if value in _status_signatures():
            return value
    return None


def libraries_in(text: str) -> list[str]:
    """Library file names a line names (sonames, DLLs, dylibs), in order."""
    return [hit.group(1) for hit in _LIBRARY.finditer(text)]


def general_matches(text: str, known: list[Match], base: SignatureBase) -> list[Match]:
    """General matches for one line, beside what the catalogue's signatures found on it.

    Nothing when a catalogue signature of a failure kind already explains the line, or the
    line is benign: the general reading is for shapes the catalogue does not know.
    """
    kinds = {match.signature.kind for match in known}
    if kinds & {"benign", "missing_library", "library_version", "win_loader", "lookup", "direct"}:
        return []
    signatures = _signatures()
    found: list[Match] = []
    for name in _ERROR_NAME.findall(text)[:1]:
        found.append(Match(signatures["cuda_name"], {"name": name}))
    for status in _CUDNN_STATUS.findall(text)[:1]:
        found.append(Match(signatures["cudnn_status"], {"status": status}))
    code = windows_status(text)
    if code is not None:
        found.append(Match(_status_signatures()[code], {"status": code}))
    if found or not _FAILURE.search(text):
        return found
    errno = _WIN_ERRNO.search(text)
    # ONNX Runtime's own libraries (its provider libraries) fail when one of their
    # dependencies does; which one is on another line (a wrapped message) or nowhere: the
    # catalogue's signatures for those messages rank the dependencies. Only an error number
    # says more here.
    libraries = [
        name
        for name in dict.fromkeys(libraries_in(text))
        if "onnxruntime" not in name.lower() or (errno and name.lower().endswith(".dll"))
    ]
    for library in libraries[-2:]:
        if library.lower().endswith(".dll"):
            # The Windows loader: its error number, or its message ("The specified module
            # could not be found" is 126), says what failed.
            fields = {"target": library, "message": text}
            if errno:
                fields["errno"] = errno.group(1)
            found.append(Match(signatures["loader"], fields))
        else:
            found.append(Match(signatures["library"], {"lib": library}))
    return found
