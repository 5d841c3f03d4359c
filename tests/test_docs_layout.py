"""The maps of the code stay true: the README's layout section and docs/architecture.md.

Every row of core (a folder at its root), every folder in a row, and every module at core's root
is named in both, and every folder or module they name exists. A folder or module added
or removed without its map fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"
MAPS = {
    "README.md": ROOT / "README.md",
    "docs/architecture.md": ROOT / "docs" / "architecture.md",
}


def _packages_and_modules(folder: Path) -> set[str]:
    """The packages (``checks/``) and modules (``judge.py``) directly in ``folder``."""
    folders = {f"{p.name}/" for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.name for p in folder.glob("*.py") if p.name != "__init__.py"}
    return folders | modules


def _core_parts() -> set[str]:
    """core's rows (``readers/``), its root modules (``facade.py``) and the folders of each row
    (``collect/``), as the maps name them."""
    parts = _packages_and_modules(CORE)
    for row in [CORE / p[:-1] for p in parts if p.endswith("/")]:
        parts |= {part for part in _packages_and_modules(row) if part.endswith("/")}
    return parts


def _readme_layout() -> str:
    """The README's layout block: the first fenced block after '## Development'."""
    text = MAPS["README.md"].read_text(encoding="utf-8")
    section = text[text.index("## Development") :]
    return section.split("```", 2)[1]


def _named(text: str) -> set[str]:
    """Every folder (``name/``) and Python module (``name.py``) a map names."""
    bare = re.findall(r"(?<![\w/.])([a-z_]+/|[a-z_]+\.py)(?![\w])", text)
    under_core: set[str] = set()
    for path in re.findall(r"core/((?:[a-z_]+/)*(?:[a-z_]+\.py)?)(?![\w])", text):
        segments = path.split("/")
        under_core |= {f"{segment}/" for segment in segments[:-1]}
        under_core |= {segments[-1]} if segments[-1] else set()
    return {*bare, *under_core}


@pytest.mark.parametrize("name", sorted(MAPS))
def test_every_core_folder_and_module_is_named(name: str) -> None:
    text = _readme_layout() if name == "README.md" else MAPS[name].read_text(encoding="utf-8")
    named = _named(text)
    missing = sorted(part for part in _core_parts() if part not in named and f"`{part[:-3]}`" not in text)
    assert missing == [], f"{name} does not name: {missing}"


def test_every_folder_the_readme_layout_names_exists() -> None:
    layout = _readme_layout()
    top = {line.split()[0] for line in layout.splitlines() if line and not line.startswith(" ")}
    absent = sorted(entry for entry in top if not (ROOT / entry.rstrip("/")).exists())
    assert absent == []
    nested = {
        line.split()[0]
        for line in layout.splitlines()
        if line.startswith("  ") and line.split()[0].endswith("/")
    }
    rows = {p.name for p in CORE.iterdir() if p.is_dir()}
    in_rows = {f"{q.name}" for row in rows for q in (CORE / row).iterdir() if q.is_dir()}
    assert sorted(n for n in nested if n.rstrip("/") not in rows | in_rows) == []


def test_every_core_part_the_architecture_names_exists() -> None:
    text = MAPS["docs/architecture.md"].read_text(encoding="utf-8")
    named_core = set(re.findall(r"(?<![\w/])core/((?:[a-z_]+/)*[a-z_]+(?:/|\.py))", text))
    absent = sorted(part for part in named_core if not (CORE / part.rstrip("/")).exists())
    assert absent == []
    rows = set(re.findall(r"`([a-z_]+)`", text[text.index("| row | what it holds |") :].split("\n\n")[0]))
    assert sorted(r for r in rows if not (CORE / r).is_dir() and not (CORE / f"{r}.py").exists()) == []


def test_the_check_fails_on_a_map_that_leaves_a_module_out() -> None:
    layout = _readme_layout().replace("facade.py", "fcaade.py")
    assert "facade.py" in _core_parts()
    assert "facade.py" not in _named(layout)
