"""`gui` on the command line: listed in --help; without a display its own usage, and a bundle
opened over SSH is shown in the terminal, never diagnosed or written over (issue 13)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fallback_doctor.gui.app import build_parser
from fallback_doctor.wizard_options import headless_argv

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "bundle"))


def _no_display() -> dict[str, str]:
    drop = {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}
    return {key: value for key, value in os.environ.items() if key not in drop}


def _run(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fallback_doctor", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=_no_display(),
        cwd=cwd,
    )


def test_top_level_help_lists_gui() -> None:
    result = _run(["--help"])
    assert result.returncode == 0
    commands = result.stdout.split("positional arguments:")[1]
    assert "    gui " in commands and "diagnose" in commands


def test_gui_help_without_a_display_is_guis_own_usage() -> None:
    result = _run(["gui", "--help"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: fallback-doctor gui")
    assert "--bundle ZIP" in result.stdout
    assert "--quick" not in result.stdout and "--force" not in result.stdout  # diagnose's options
    assert "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def customer_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from bundle_plants import real_document
    from fallback_doctor.core.bundle.export import prepare_bundle
    from fallback_doctor.core.bundle.members import bundle_members
    from fallback_doctor.core.bundle.preview import BundleOptions
    from fallback_doctor.core.bundle.write import write_bundle

    document = real_document()
    folder = tmp_path_factory.mktemp("customer")
    preview = prepare_bundle(document, bundle_members(document), BundleOptions())
    return write_bundle(preview, folder / "customer.zip", mapping_directory=folder / "mapping").path


def _hashes(folder: Path) -> dict[Path, str]:
    files = (path for path in folder.rglob("*") if path.is_file())
    return {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in files}


def test_gui_bundle_without_a_display_shows_it_and_writes_nothing(customer_bundle: Path) -> None:
    folder = customer_bundle.parent
    before = _hashes(folder)
    stamp = customer_bundle.stat().st_mtime_ns
    result = _run(["gui", "--bundle", str(customer_bundle), "--lang", "en"], cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "bundle show" in result.stderr and "fallback-doctor diagnose" not in result.stderr
    assert "Verdict:" in result.stdout
    assert _hashes(folder) == before  # the customer's file untouched, nothing new beside it
    assert customer_bundle.stat().st_mtime_ns == stamp


def test_gui_options_become_the_same_diagnose_options() -> None:
    options = ["--bareun-root", "/opt/bareun", "--log", "a.log", "--pid", "42", "--lang", "ko"]
    expected = ["diagnose", "--bareun-root", "/opt/bareun", "--pid", "42", "--log", "a.log", "--lang", "ko"]
    assert headless_argv(build_parser().parse_args(options)) == expected
    bundle = build_parser().parse_args(["--bundle", "x.zip", "--python", "/usr/bin/python3"])
    assert headless_argv(bundle) == ["bundle", "show", "x.zip"]


def test_a_missing_bundle_without_a_display_is_refused_not_diagnosed(tmp_path: Path) -> None:
    result = _run(["gui", "--bundle", str(tmp_path / "missing.zip")], cwd=tmp_path)
    assert result.returncode == 2
    assert "refused" in result.stderr
    assert list(tmp_path.iterdir()) == []
