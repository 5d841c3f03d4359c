"""Every file the tool reads goes through the one bounded, non-blocking reader (issue 28, item 1).

core/platform/files.py is that reader: ``open_regular_file`` / ``read_regular_file`` /
``read_regular_text`` open without blocking (a FIFO never waits for a writer), refuse anything
but a regular file on the descriptor (not on a name that could change), and read at most a
bound. core/readers/logs/opening.py (logs, their rotations) and core/bundle/safe_open.py (bundles) are
built on it. This test walks the code (``ast``) for every way of opening a file to read it,
``open()``, ``io/gzip/bz2/lzma/tarfile.open``, ``os.open`` without ``O_NONBLOCK``,
``Path.read_text/read_bytes``, ``X.open("r…")``, ``json/tomllib/pickle.load`` and
``zipfile.ZipFile`` for reading, and fails on one that is neither in the reader itself nor in
the commented allowlist below. The allowlist is checked too: an entry that matches nothing
fails, so it cannot go stale. Not seen: ``Path.open()`` without a mode argument (none today).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("core", "cli", "gui", "launcher")
GUARDED_READER = "core/platform/files.py"

_RESOURCE = "the tool's own bundled resource (resources/, read by the package's path)"
_PROC = "a kernel file under /proc or /sys of this machine: not a FIFO, not another user's file"
_CHILD = (
    "inside a probe child run by the application's interpreter with the standard library only (it "
    "cannot import the reader): a file the tool made in its own work folder"
)

ALLOWED: dict[tuple[str, str, str], str] = {
    # --- the tool's own bundled resources -------------------------------------------------
    ("core/bundle/sources.py", "_rules", "read_text"): _RESOURCE,
    ("core/redaction/words.py", "common_words", "read_text"): _RESOURCE,
    ("core/readers/knowledge/arch_matrix.py", "_data", "read_text"): _RESOURCE,
    ("core/readers/knowledge/cuda_packages.py", "_read", "read_text"): _RESOURCE,
    ("core/readers/knowledge/directml_coreml.py", "facts", "read_text"): _RESOURCE,
    ("core/readers/knowledge/driver_matrix.py", "_data", "read_text"): _RESOURCE,
    ("core/readers/knowledge/environment.py", "allowlist", "read_text"): _RESOURCE,
    ("core/readers/knowledge/native_apps.py", "native_apps", "read_text"): _RESOURCE,
    ("core/readers/knowledge/nvml_errors.py", "_load", "read_text"): _RESOURCE,
    ("core/readers/knowledge/ort_matrix.py", "_rows", "read_text"): _RESOURCE,
    ("core/readers/knowledge/ort_matrix.py", "newest_gpu_release", "read_text"): _RESOURCE,
    ("core/readers/logs/extract.py", "_status_signatures", "read_text"): _RESOURCE,
    ("core/readers/logs/separators.py", "", "read_text"): _RESOURCE,
    ("core/readers/logs/signatures.py", "_read_all", "read_text"): _RESOURCE,
    ("core/readers/logs/versions.py", "_compat", "read_text"): _RESOURCE,
    ("core/language/particles.py", "_readings", "read_text"): _RESOURCE,
    ("core/document/schema.py", "report_schema", "read_text"): _RESOURCE,
    (
        "core/language/texts.py",
        "_catalogue",
        "read_text",
    ): _RESOURCE,  # also a translator's FALLBACK_DOCTOR_CATALOGUES
    ("core/language/texts.py", "_grammar", "read_text"): _RESOURCE,
    # --- built on the reader's way of opening, with what it needs besides -----------------
    ("core/bundle/safe_open.py", "read_members", "ZipFile"): (
        "a ZipFile over the stream open_regular_file opened (the bundle's size checked on it)"
    ),
    ("core/bundle/sources.py", "_read_regular", "os.open"): (
        "O_NONBLOCK and fstat on the descriptor as the reader does, naming the file type in the preview"
    ),
    (
        "core/readers/cache.py",
        "_write_in",
        "os.open",
    ): "creates the cache file: O_CREAT | O_EXCL | O_NOFOLLOW, 0600",
    (
        "core/readers/cache_folder.py",
        "",
        "os.open",
    ): "opens folders: O_DIRECTORY | O_NOFOLLOW, one component at a time",
    # --- kernel files of this machine -----------------------------------------------------
    ("core/readers/collect/device.py", "", "open"): _PROC,
    ("core/readers/collect/driver.py", "", "open"): _PROC,
    ("core/readers/collect/gpu_memory.py", "", "read_text"): _PROC,
    ("core/readers/collect/gpu_memory.py", "", "open"): _PROC,
    ("core/readers/collect/process.py", "", "open"): _PROC,
    ("core/readers/probes/reaper.py", "", "open"): _PROC
    + " (walked for every process: kept plain for speed)",
    ("core/readers/sampling/nvml_source.py", "", "open"): _PROC,
    # --- probe children (standard library only, in the application's interpreter) ---------
    ("core/readers/probes/capi_probe/output.py", "", "open"): _CHILD,
    ("core/readers/probes/capi_probe/probe.py", "", "open"): _CHILD,
    ("core/readers/probes/capi_probe/probe.py", "", "json.load"): _CHILD,
    ("core/readers/probes/native_child.py", "", "open"): _CHILD,
    ("core/readers/probes/python_child/capture.py", "", "open"): _CHILD,
    ("core/readers/probes/python_child/inputs.py", "", "open"): _CHILD
    + " (the model description beside the model)",
    ("core/readers/probes/python_child/inputs.py", "", "json.load"): _CHILD,
    ("core/readers/probes/python_child/main.py", "", "open"): _CHILD,
    ("core/readers/probes/python_child/ort_now.py", "", "read_text"): _CHILD,
    ("core/readers/probes/python_env_child.py", "metadata_distributions", "read_text"): (
        "importlib.metadata's Distribution.read_text, only with --importlib-metadata (the tests "
        "compare it with the bounded reading the child does by default)"
    ),
    # --- part A -----------------------------------------------------------------------------
}
"""(file, function, call) -> why this read may bypass the reader. Function "" allows the call
anywhere in the file (kernel files and probe children, whose functions come and go)."""

_WRITE = frozenset("wax+")
_MODULE_OPENS = frozenset({"io", "gzip", "bz2", "lzma", "tarfile"})
_SAFE_OS_FLAGS = ("O_NONBLOCK", "O_DIRECTORY", "O_WRONLY", "O_RDWR", "O_CREAT")


def _mode(call: ast.Call, position: int) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == "mode" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    argument = call.args[position] if len(call.args) > position else None
    return str(argument.value) if isinstance(argument, ast.Constant) else None


def _writes(call: ast.Call, position: int) -> bool:
    mode = _mode(call, position)
    return mode is not None and bool(_WRITE & set(mode))


def read_kind(call: ast.Call) -> str | None:
    """The kind of file read ``call`` makes ("open", "read_text" …), or None when it is none."""
    func = call.func
    if isinstance(func, ast.Name):
        if func.id == "open":
            return None if _writes(call, 1) else "open"
        if func.id == "ZipFile":
            return None if _writes(call, 1) else "ZipFile"
        return None
    if not isinstance(func, ast.Attribute):
        return None
    owner = func.value.id if isinstance(func.value, ast.Name) else None
    if func.attr in ("read_text", "read_bytes"):
        return func.attr
    if func.attr == "load" and owner in ("json", "tomllib", "pickle"):
        return f"{owner}.load"
    if func.attr == "ZipFile":
        return None if _writes(call, 1) else "ZipFile"
    if func.attr == "open" and owner == "os":
        flags = ast.unparse(call.args[1]) if len(call.args) > 1 else ""
        return None if any(flag in flags for flag in _SAFE_OS_FLAGS) else "os.open"
    if func.attr == "open" and owner in _MODULE_OPENS:
        return None if _writes(call, 1) else f"{owner}.open"
    if func.attr == "open":
        mode = _mode(call, 0)
        reads = (mode is not None and not (_WRITE & set(mode))) or any(
            k.arg == "encoding" for k in call.keywords
        )
        return "open" if reads else None
    return None


class _Walker(ast.NodeVisitor):
    def __init__(self) -> None:
        self.stack: list[str] = []
        self.found: list[tuple[str, str, int]] = []

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped  # noqa: N815

    def visit_Call(self, node: ast.Call) -> None:
        kind = read_kind(node)
        if kind is not None:
            function = next((name for name in reversed(self.stack) if not name[:1].isupper()), "")
            self.found.append((function, kind, node.lineno))
        self.generic_visit(node)


def file_reads() -> list[tuple[str, str, str, int]]:
    """(file, function, kind, line) of every file read in the tool's code."""
    reads: list[tuple[str, str, str, int]] = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            walker = _Walker()
            walker.visit(ast.parse(path.read_text(encoding="utf-8"), relative))
            reads.extend((relative, function, kind, line) for function, kind, line in walker.found)
    return reads


def _allowed(relative: str, function: str, kind: str) -> tuple[str, str, str] | None:
    for key in ((relative, function, kind), (relative, "", kind)):
        if key in ALLOWED:
            return key
    return None


def test_every_file_read_goes_through_the_guarded_reader() -> None:
    unguarded = [
        f"{relative}:{line}: {kind} in {function or '<module>'}()"
        for relative, function, kind, line in file_reads()
        if relative != GUARDED_READER and _allowed(relative, function, kind) is None
    ]
    assert not unguarded, "reads that bypass core/platform/files.py:\n" + "\n".join(unguarded)


def test_the_allowlist_has_no_stale_entry() -> None:
    used = {_allowed(relative, function, kind) for relative, function, kind, _line in file_reads()}
    stale = sorted(set(ALLOWED) - used)
    assert not stale, f"allowlist entries that match no read any more: {stale}"


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("open(p)", "open"),
        ("open(p, 'rb')", "open"),
        ("open(p, 'w')", None),
        ("Path(p).read_text()", "read_text"),
        ("p.read_bytes()", "read_bytes"),
        ("p.open('rb')", "open"),
        ("p.open(encoding='utf-8')", "open"),
        ("sampler.open()", None),
        ("os.open(p, os.O_RDONLY)", "os.open"),
        ("os.open(p, os.O_RDONLY | os.O_NONBLOCK)", None),
        ("gzip.open(p)", "gzip.open"),
        ("json.load(handle)", "json.load"),
        ("zipfile.ZipFile(p)", "ZipFile"),
        ("zipfile.ZipFile(p, 'w')", None),
    ],
)
def test_the_walk_sees_each_way_of_reading(source: str, kind: str | None) -> None:
    call = ast.parse(source, mode="eval").body
    assert isinstance(call, ast.Call)
    assert read_kind(call) == kind
