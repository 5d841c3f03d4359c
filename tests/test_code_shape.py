"""Rooms that fit one idea: no module over 500 lines, no function over 80 lines.

Walks every module of core/, cli/, gui/ and launcher/. The exceptions are listed below, each
with its reason; an entry that no longer exceeds the limit fails too, so the lists only shrink
(remove the entry when its file is split).
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("core", "cli", "gui", "launcher")
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80

# Self-contained probe scripts run BY PATH by other interpreters (the application's Python,
# 3.8+): they may import nothing of ours. The C-API and the Python probe are split all the same
# (a package beside the script, which puts its folder on sys.path), so they are held to the limit.
PROBE_SCRIPTS = "core/readers/probes/*_child.py"
NOT_A_PROBE_SCRIPT = {"core/readers/probes/ort_capi_child.py", "core/readers/probes/ort_python_child.py"}

# Modules over the limit that their owners are splitting in this sitting. The lead removes an
# entry when the split is merged.
LARGE_MODULES: dict[str, str] = {}

# Functions over the limit, as "path::qualified.name", in files their owners are changing.
LONG_FUNCTIONS: dict[str, str] = {}


def _modules() -> list[Path]:
    found: list[Path] = []
    for folder in FOLDERS:
        found.extend(path for path in (ROOT / folder).rglob("*.py") if "__pycache__" not in path.parts)
    return sorted(found)


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _is_probe_script(relative: str) -> bool:
    return fnmatch.fnmatch(relative, PROBE_SCRIPTS) and relative not in NOT_A_PROBE_SCRIPT


def function_lengths(source: str) -> dict[str, int]:
    """Every function and method by qualified name (Class.method, outer.inner) -> its lines."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                end = child.end_lineno if child.end_lineno is not None else child.lineno
                lengths[name] = end - child.lineno + 1
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return lengths


def module_sizes() -> dict[str, int]:
    return {_relative(path): len(path.read_text(encoding="utf-8").splitlines()) for path in _modules()}


def long_functions() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in _modules():
        for name, lines in function_lengths(path.read_text(encoding="utf-8")).items():
            if lines > MAX_FUNCTION_LINES:
                found[f"{_relative(path)}::{name}"] = lines
    return found


def test_the_measure_counts_methods_and_nested_functions() -> None:
    source = "class A:\n    def m(self):\n        def inner():\n            pass\n        return 1\n"
    assert function_lengths(source) == {"A.m": 4, "A.m.inner": 2}


def test_no_module_over_500_lines() -> None:
    sizes = module_sizes()
    too_large = {
        path: lines
        for path, lines in sizes.items()
        if lines > MAX_MODULE_LINES and path not in LARGE_MODULES and not _is_probe_script(path)
    }
    assert too_large == {}, "split these modules along the ideas they hold"


def test_no_function_over_80_lines() -> None:
    too_long = {name: lines for name, lines in long_functions().items() if name not in LONG_FUNCTIONS}
    assert too_long == {}, "split these functions (tables or small functions)"


def test_every_exception_is_still_needed() -> None:
    sizes = module_sizes()
    stale_modules = [path for path in LARGE_MODULES if sizes.get(path, 0) <= MAX_MODULE_LINES]
    long = long_functions()
    stale_functions = [name for name in LONG_FUNCTIONS if name not in long]
    assert stale_modules == [], "remove these from LARGE_MODULES: they fit now"
    assert stale_functions == [], "remove these from LONG_FUNCTIONS: they fit now"
