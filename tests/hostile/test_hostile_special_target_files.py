"""Special files where the target's files are expected: refused at once and named, never waited on.

The log readers refused FIFOs, devices and directories long ago; the target's other files did
not: a FIFO as ``bareun.json`` hung ``diagnose`` forever (plain ``open()`` waits for a writer), and
a FIFO as a wheel's ``RECORD`` or as a library in a searched folder did the same inside the
collectors. Every reader of a target file now goes through core/platform/files.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fallback_doctor.core.platform.files import NotARegularFileError, read_regular_file
from fallback_doctor.core.readers.collect.onnxruntime import record_files
from fallback_doctor.core.readers.loader.elf import elf_identity, is_elf, read_elf_dynamic

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "targets"))

from bareun_layout import make_install

TOOL = (sys.executable, "-m", "fallback_doctor")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev are POSIX")


def _special(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"special-{kind}"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "loop":
        path.symlink_to(path)
    else:
        path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize("kind", ["fifo", "directory", "device", "loop"])
def test_every_target_file_reader_refuses_a_special_file_at_once(tmp_path: Path, kind: str) -> None:
    path = _special(tmp_path, kind)
    started = time.monotonic()
    with pytest.raises(OSError, match=r"refused|loop|Too many levels") as raised:
        read_regular_file(path, 1024)
    if kind != "loop":
        assert isinstance(raised.value, NotARegularFileError) and str(path) in str(raised.value)
    assert record_files(str(path)) == []
    assert is_elf(str(path)) is False and elf_identity(str(path)) is None
    with pytest.raises(OSError, match=r"refused|loop|Too many levels"):
        read_elf_dynamic(str(path))
    assert time.monotonic() - started < 5


def test_a_fifo_as_bareun_json_is_named_and_the_diagnosis_goes_on(tmp_path: Path) -> None:
    root = make_install(tmp_path)
    config = root / "config" / "bareun.json"
    config.unlink()
    os.mkfifo(config)
    env = {key: value for key, value in os.environ.items() if key not in ("BAREUN_ROOT", "LD_LIBRARY_PATH")}
    started = time.monotonic()
    done = subprocess.run(
        [*TOOL, "diagnose", "--target", "bareun", "--bareun-root", str(root), "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert time.monotonic() - started < 30, "waited on the FIFO"
    document = json.loads(done.stdout)
    said = json.dumps(document["findings"])
    assert "FIFO" in said and str(config) in said
    assert document["environment"].get("libraries") is not None  # the rest was still checked
