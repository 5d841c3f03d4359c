"""English words our own checks composed, left in a report shown in Korean (issue 13).

A Korean report keeps some English on purpose: what a system wrote (dlerror, ONNX Runtime's log
lines and errors, NVML's messages, a probe's stderr), file paths and file names, package, library,
provider, program and function names, environment variables, acronyms, numbers and units. What is
left after those are taken out of a shown text are English words that our checks composed and that
the catalogues (resources/texts/<lang>/, by the ids the document holds) should have said in
Korean: :func:`leftovers` lists them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from fallback_doctor.core.language.evidence_text import evidence_words
from fallback_doctor.core.language.texts import finding_words

SYSTEM_LABELS = (
    "ONNX Runtime said",
    "error",
    "strict run (",
    "log line (",
    "log",
    "stderr",
    "probe stderr (end)",
    "probe stdout (end)",
    "register_execution_provider_library",
    "library not loaded here",
    "not read",
    "operator types on the CPU",
)
"""Labels (English, as the document has them) whose values are a system's own words or a list of
names (ONNX operator types): quoted as they are, never translated."""

SYSTEM_SOURCES = ("dlopen in the native probe", "probe stderr (fd 2)")
"""Where a value was read when the value is what that system said (a dlerror text, a log line)."""

_SYSTEM_MARKERS = re.compile(
    r"\[ONNXRuntimeError\]|\[[EWIV]:onnxruntime|\bUserWarning:|: cannot open shared object file|"
    r"\bFail: |\bCUDA failure \d+|\bTraceback \(most recent call last\)|\bEP Error\b|\b\w+ failed \(ORT_"
)
"""Where a system's own message starts inside one of our sentences; it runs to the next Korean word."""

_NAME_WORDS = """
    docker podman containerd kubectl kubernetes pip pipx uv apt dnf yum conda python python3 ldd
    ldconfig lspci lsmod dmesg nvidia-smi dlopen dlerror ctypes numpy onnxruntime torch tensorrt
    systemctl systemd sudo wsl bash sh grep cat ls echo export unset env onnx cuda cudnn cublas
    cublasLt curand cufft cudart nvrtc nvinfer nvjitlink libcuda nvml glibc musl gcc elf intel
    microsoft apple qualcomm amd nvidia ubuntu debian windows linux bareun nvidiactl lib compose
    stderr stdout fd ms
"""
NAMES = frozenset(_NAME_WORDS.split())
"""Names kept as written, in any case (programs, packages, devices, vendors, units)."""

PRODUCT_WORDS = frozenset({"Runtime", "Container", "Toolkit", "PowerShell", "Operator", "Compose"})
"""Capitalised words of product names ("ONNX Runtime", "NVIDIA Container Toolkit")."""

_KEPT = re.compile(
    r'"[^"\n]*"'  # a quoted text
    r"|'[^'\n]*'"
    r"|`[^`\n]*`"
    r"|“[^”\n]*”"  # a command quoted in a Korean sentence (no backticks in Korean prose)
    r"|\bhttps?://\S+"  # an address
    r"|[^\s(),;:'\"]*[/\\][^\s,;'\"]*"  # a path, a folder pattern ("nvidia/*/lib")
    r"|\S*\$\w+\S*"  # a shell variable
    r"|--?[A-Za-z][\w-]*(?:=\S*)?"  # an option
    r"|\b\w+(?:\.\w+)+(?:\(\))?"  # a file name, a version, a dotted name ("session.get_providers()")
    r"|\b\w+\(\)"  # a function
    r"|\.[A-Za-z]\w*"  # a file name's extension after a Korean word ("버전.tgz")
    r"|\b[A-Za-z]*_[\w*]*"  # an identifier with an underscore (fell_back_to_cpu, ORT_TENSORRT_*)
    r"|\b[\w.+-]*[A-Za-z][\w.+-]*==[\w.*+-]+"  # a pinned requirement
    r"|\b[\w.:-]+=\d+\b"  # a model's dimension and its value, its name as the model has it ("seq=128")
    r"|\b[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b"  # a package name ("onnxruntime-gpu", "nvidia-cudnn-cu13")
    r"|\bx\d+\b"  # a count ("Add x41")
    r"|\b\w*[A-Z]\w*[A-Z]\w*"  # two capitals: an acronym, a CamelCase name (CUDAExecutionProvider, cuDNN)
    r"|\b[a-z]+[A-Z]\w*"  # a name with a capital inside (cuInit, cudaErrorInsufficientDriver)
    r"|\b\w*\d\w*",  # anything with a digit (sm_90, cu13, 4130, 12.x)
    re.ASCII,  # a Korean particle right after a name ends the name ("site-packages의")
)
_WORD = re.compile(r"[A-Za-z]{2,}")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _without_system_text(text: str) -> str:
    """The text with every system message cut out: from its marker to the next Korean word."""
    while (match := _SYSTEM_MARKERS.search(text)) is not None:
        korean = _HANGUL.search(text, match.end())
        text = text[: match.start()] + " " + (text[korean.start() :] if korean else "")
    return text


def leftovers(text: str) -> list[str]:
    """The English words in ``text`` (a text shown in Korean) that are none of the kept kinds."""
    rest = _KEPT.sub(" ", _without_system_text(text))
    return [word for word in _WORD.findall(rest) if word.lower() not in NAMES and word not in PRODUCT_WORDS]


def _is_system(label: str, source: str) -> bool:
    inner = (
        label.split(": ", 1)[-1]
        if label.startswith(("GPU retry: ", "CPU baseline: ", "GPU run: "))
        else label
    )
    return inner.startswith(SYSTEM_LABELS) or source in SYSTEM_SOURCES


def evidence_leftovers(document: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(finding id, what, the text shown in Korean) for each evidence label, value or source of
    ``document`` shown with English words left (a system's own message excepted)."""
    for finding in document.get("findings") or []:
        for item in finding.get("evidence") or []:
            label = str(item.get("label") or "")
            source = str(item.get("source") or "")
            ko_label, ko_value, ko_source = evidence_words(item, "ko")
            shown = {"label": ko_label, "source": ko_source}
            if not _is_system(label, source):
                shown["value"] = ko_value
            for what, text in shown.items():
                if leftovers(text):
                    yield str(finding.get("id")), what, text


def text_leftovers(document: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(finding id, part, the Korean text) for each Korean title, detail, fix or verify line of
    ``document`` with English words left."""
    for finding in document.get("findings") or []:
        korean = finding_words(finding, "ko")
        for part in ("title", "detail", "fix", "verify"):
            text = str(korean.get(part) or "")
            if leftovers(text):
                yield str(finding.get("id")), part, text
