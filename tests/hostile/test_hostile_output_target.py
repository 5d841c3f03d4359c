"""An output path that is one of the target's files is refused, ``--force`` or not (issue 28).

Before: ``diagnose --bundle <root>/config/bareun.json --force`` replaced the server's
configuration with a zip without a word. Here a real Bareun layout (tests/core/targets) is
diagnosed with ``--bundle`` aimed at its configuration, a log, a file inside its libPath, a
link and a hard link to the configuration, and into a Python environment: each is refused
with exit 2 in under 5 s and the file is unchanged; a bundle beside the install is written.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "targets"))

from bareun_layout import make_install

TOOL = (sys.executable, "-m", "fallback_doctor")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links")


def _env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key not in ("BAREUN_ROOT", "LD_LIBRARY_PATH")}


def _bundle(root: Path, destination: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [*TOOL, "diagnose", "--target", "bareun", "--bareun-root", str(root), "--quick"]
    return subprocess.run(
        [*argv, "--bundle", str(destination), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
        check=False,
    )


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_bundle_over_the_targets_own_files_is_refused_even_with_force(tmp_path: Path) -> None:
    root = make_install(tmp_path)
    config = root / "config" / "bareun.json"
    logs = sorted(path for path in root.rglob("*.log") if path.is_file())
    lib_file = next(path for path in (root / "lib").rglob("*") if path.is_file())
    link = tmp_path / "looks-harmless.zip"
    link.symlink_to(config)
    hard = tmp_path / "hard.zip"
    os.link(config, hard)
    targets = [config, lib_file, link, hard, root / "lib" / "new.zip", root / "config" / "new.zip"]
    targets += logs[:1]
    for destination in targets:
        before = {path: _digest(path) for path in (config, lib_file, *logs[:1])}
        started = time.monotonic()
        done = _bundle(root, destination, "--force")
        seconds = time.monotonic() - started
        assert done.returncode == 2, (destination, done.stderr[-2000:])
        assert "refused" in done.stderr and "changes none of the target's files" in done.stderr, done.stderr
        assert {path: _digest(path) for path in before} == before, destination
        assert not (root / "lib" / "new.zip").exists() and not (root / "config" / "new.zip").exists()
        assert seconds < 30, seconds  # the whole quick diagnosis; the refusal itself is immediate
    beside = tmp_path / "bundle.zip"
    assert _bundle(root, beside).returncode in (0, 1), "a bundle beside the install is still written"
    assert beside.exists()


def test_the_refusal_itself_is_immediate_and_covers_a_python_environment(tmp_path: Path) -> None:
    from fallback_doctor.core.bundle.protected import refusal, target_paths

    venv = tmp_path / "venv"
    (venv / "lib").mkdir(parents=True)
    document = {"environment": {"python": {"prefix": str(venv)}, "target": {"config_path": None}}}
    protected = target_paths(document)
    started = time.monotonic()
    assert refusal(venv / "lib" / "out.zip", protected) is not None
    assert refusal(venv / "bin" / "missing" / "out.zip", protected) is not None
    assert refusal(tmp_path / "out.zip", protected) is None
    assert refusal(tmp_path / "venv-other" / "out.zip", protected) is None
    # A Python whose prefix is "/" does not make every path the target's.
    assert target_paths({"environment": {"python": {"prefix": "/"}}}) == ()
    assert time.monotonic() - started < 5
