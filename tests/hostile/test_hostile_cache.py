"""The fact cache is the tool's own (issue 28): another user's link or folder never decides where
the tool writes, and an entry edited by hand or a library rewritten in place never changes a fact.

The attacks are the ones the issue's attack run made: ``sudo -E`` keeps ``HOME``, so root
writes under a folder another user controls; and the cache file, writable by the user, is
edited to plant a NEEDED entry. Another user is played by ``nobody`` (``lchown``), which needs
root; where the tests do not run as root those two are skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from fallback_doctor.core.readers.loader.elf import read_elf_dynamic
from fallback_doctor.core.readers.loader.elf_cache import ElfReader, open_cache

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="ELF libraries and POSIX owners")
NOBODY = 65534
as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="plays another user")


@pytest.fixture
def library(tmp_path: Path) -> Path:
    import _ctypes

    target = tmp_path / "libs" / "libreal.so.1"
    target.parent.mkdir()
    shutil.copy2(str(_ctypes.__file__), target)
    return target


def _seeded(folder: Path, library: Path) -> Path:
    reader = ElfReader(open_cache(str(folder)))
    reader.dynamic(str(library))
    reader.save()
    return folder / "elf-dynamic.json"


def test_an_entry_edited_by_hand_does_not_change_a_fact(tmp_path: Path, library: Path) -> None:
    path = _seeded(tmp_path / "cache", library)
    document = json.loads(path.read_text())
    value = document["entries"][str(library)][2]
    value["needed"] = ["libplanted.so.1"]  # identity and digest kept: only the check can see it
    path.write_text(json.dumps(document))
    reader = ElfReader(open_cache(str(tmp_path / "cache")))
    assert reader.dynamic(str(library)) == read_elf_dynamic(str(library))
    assert "libplanted.so.1" not in reader.dynamic(str(library)).needed
    assert reader.reads == 1 and reader.cache.rejected == 1
    reader.save()
    assert "libplanted" not in path.read_text()  # the bad entry is replaced by the file's own


def test_a_library_rewritten_in_place_with_its_old_size_and_mtime_is_read_again(
    tmp_path: Path, library: Path
) -> None:
    first = read_elf_dynamic(str(library))
    _seeded(tmp_path / "cache", library)
    before = os.stat(library)
    name = first.needed[0].encode()
    data = library.read_bytes()
    assert data.count(name + b"\0") >= 1
    changed = b"libZ" + name[4:]
    with open(library, "r+b") as handle:  # same inode, same size
        handle.seek(data.index(name + b"\0"))
        handle.write(changed)
    os.utime(library, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(library)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    reader = ElfReader(open_cache(str(tmp_path / "cache")))
    assert reader.dynamic(str(library)).needed[0] == changed.decode()
    assert reader.cache.rejected == 1


def test_the_cache_folder_and_file_are_private(tmp_path: Path, library: Path) -> None:
    folder = tmp_path / "a" / "b" / "facts"
    path = _seeded(folder, library)
    assert folder.stat().st_mode & 0o777 == 0o700
    assert path.stat().st_mode & 0o777 == 0o600
    folder.chmod(0o755)
    _seeded(folder, library)
    assert folder.stat().st_mode & 0o777 == 0o700  # made private again


def _refused(folder: Path, library: Path, capsys: pytest.CaptureFixture[str]) -> str:
    reader = ElfReader(open_cache(str(folder)))
    assert reader.dynamic(str(library)) == read_elf_dynamic(str(library))
    reader.save()
    assert reader.cache.refusal is not None
    assert capsys.readouterr().err.count("fact cache is not used") <= 1
    return reader.cache.refusal


@as_root
def test_sudo_e_a_symlinked_cache_folder_of_another_user_is_not_followed(
    tmp_path: Path, library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``sudo -E``: HOME is another user's, and that user linked the cache folder to /etc."""
    victim = tmp_path / "etc"
    victim.mkdir()
    home = tmp_path / "home-of-nobody"
    home.mkdir()
    (home / ".cache").mkdir()
    link = home / ".cache" / "gpu-fallback-doctor"
    link.symlink_to(victim)
    os.lchown(link, NOBODY, NOBODY)
    refusal = _refused(link / "facts", library, capsys)
    assert "symbolic link owned by" in refusal and "nobody" in refusal
    assert list(victim.iterdir()) == []  # nothing written where the link pointed


@as_root
def test_sudo_e_a_home_of_another_user_is_refused_with_one_note(
    tmp_path: Path, library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home-of-nobody"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    folder = home / ".cache" / "gpu-fallback-doctor" / "facts"
    refusal = _refused(folder, library, capsys)
    assert "belongs to nobody" in refusal and "root" in refusal
    assert not (home / ".cache").exists()  # not even created


def test_a_folder_others_can_write_is_refused(
    tmp_path: Path, library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    refusal = _refused(shared / "facts", library, capsys)
    assert "other users can write" in refusal
    assert list(shared.iterdir()) == []


def test_a_link_of_the_user_itself_is_followed(tmp_path: Path, library: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "linked").symlink_to(real)
    _seeded(tmp_path / "linked" / "facts", library)
    assert (real / "facts" / "elf-dynamic.json").exists()


def test_no_descriptor_is_kept_after_a_run(tmp_path: Path, library: Path) -> None:
    """The wizard runs many diagnoses in one process: each lets go of the cache folder."""
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        _seeded(tmp_path / "cache", library)
    assert len(os.listdir("/proc/self/fd")) == before
