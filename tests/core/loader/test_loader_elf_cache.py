"""The ELF fact cache: used while the file is the same file, never after a change, safe on bad input."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from fallback_doctor.core.readers.cache import (
    MAX_BYTES,
    MAX_ENTRIES,
    FactCache,
    default_cache_dir,
    file_identity,
)
from fallback_doctor.core.readers.loader.elf import read_elf_dynamic
from fallback_doctor.core.readers.loader.elf_cache import ElfReader, decode, encode, open_cache
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="ELF libraries")


def _real_library() -> str:
    import _ctypes

    return str(_ctypes.__file__)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    target = tmp_path / "libs" / "libreal.so.1"
    target.parent.mkdir()
    shutil.copy2(_real_library(), target)
    return target


def _reader(folder: Path) -> ElfReader:
    return ElfReader(open_cache(str(folder)))


def test_a_second_run_reads_nothing_and_gets_the_same_facts(tmp_path: Path, library: Path) -> None:
    first = _reader(tmp_path / "cache")
    expected = first.dynamic(str(library))
    first.save()
    assert first.reads == 1
    second = _reader(tmp_path / "cache")
    assert second.dynamic(str(library)) == expected == read_elf_dynamic(str(library))
    assert second.identity(str(library)) == (expected.elf_class, expected.machine)
    assert second.reads == 0 and second.cache.hits >= 1


@pytest.mark.parametrize("change", ["touch", "rewrite", "replace"])
def test_a_changed_file_is_read_again(tmp_path: Path, library: Path, change: str) -> None:
    first = _reader(tmp_path / "cache")
    first.dynamic(str(library))
    first.save()
    if change == "touch":
        info = os.stat(library)
        os.utime(library, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))
    elif change == "rewrite":
        data = library.read_bytes()
        library.write_bytes(data + b"\0")
    else:
        replacement = library.with_name("new.so")
        shutil.copy2(_real_library(), replacement)
        os.replace(replacement, library)
    second = _reader(tmp_path / "cache")
    assert second.dynamic(str(library)) == read_elf_dynamic(str(library))
    assert second.reads == 1


def test_a_file_that_changed_while_read_is_not_kept(tmp_path: Path, library: Path) -> None:
    cache = open_cache(str(tmp_path / "cache"))
    before = file_identity(str(library))
    assert before is not None
    after = (before[0], before[1], before[2] + 1, before[3])
    cache.put(str(library), before, after, read_elf_dynamic(str(library)), "0" * 64)
    cache.save(encode)
    assert not (tmp_path / "cache" / "elf-dynamic.json").exists()


def _cache_file(folder: Path) -> Path:
    return folder / "elf-dynamic.json"


def _seed(folder: Path, library: Path) -> Path:
    reader = _reader(folder)
    reader.dynamic(str(library))
    reader.save()
    path = _cache_file(folder)
    assert path.exists()
    return path


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b"\xff\xfe garbage",
        b"[]",
        b'{"format": "elf-dynamic", "version": 999, "entries": {}}',
        b'{"format": "other", "version": 1, "entries": {}}',
        b"[" * 100_000,
    ],
)
def test_a_corrupt_cache_file_is_ignored(tmp_path: Path, library: Path, content: bytes) -> None:
    path = _seed(tmp_path / "cache", library)
    path.write_bytes(content)
    os.chmod(path, 0o600)
    reader = _reader(tmp_path / "cache")
    assert reader.dynamic(str(library)) == read_elf_dynamic(str(library))
    assert reader.reads == 1


def test_a_hostile_entry_cannot_plant_facts(tmp_path: Path, library: Path) -> None:
    path = _seed(tmp_path / "cache", library)
    document = json.loads(path.read_text())
    identity, digest, value = document["entries"][str(library)]
    for bad in (
        {**value, "needed": "libevil.so"},
        {**value, "needed": [1, 2]},
        {**value, "class": 128},
        {**value, "soname": ["x"]},
        "a string",
        None,
    ):
        document["entries"][str(library)] = [identity, digest, bad]
        path.write_text(json.dumps(document))
        reader = _reader(tmp_path / "cache")
        assert reader.dynamic(str(library)) == read_elf_dynamic(str(library))
        assert reader.reads == 1
    document["entries"][str(library)] = [[True, 0, 0, 0], digest, value]
    path.write_text(json.dumps(document))
    assert _reader(tmp_path / "cache").cache.get(str(library), file_identity(str(library))) is None


def test_unsafe_cache_files_are_not_read(tmp_path: Path, library: Path) -> None:
    folder = tmp_path / "cache"
    path = _seed(folder, library)
    planted = json.loads(path.read_text())
    planted["entries"][str(library)][2]["needed"] = ["libplanted.so.1"]
    # Writable by others: not read.
    path.write_text(json.dumps(planted))
    os.chmod(path, 0o666)
    assert _reader(folder).dynamic(str(library)) == read_elf_dynamic(str(library))
    # A symlink to a file elsewhere: not followed.
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(planted))
    os.chmod(elsewhere, 0o600)
    path.unlink()
    path.symlink_to(elsewhere)
    assert _reader(folder).dynamic(str(library)) == read_elf_dynamic(str(library))
    # Too large: not read.
    path.unlink()
    path.write_bytes(b" " * (MAX_BYTES + 1))
    os.chmod(path, 0o600)
    assert _reader(folder).dynamic(str(library)).needed == read_elf_dynamic(str(library)).needed


def test_the_cache_file_is_private_and_written_atomically(tmp_path: Path, library: Path) -> None:
    folder = tmp_path / "cache"
    path = _seed(folder, library)
    assert path.stat().st_mode & 0o077 == 0
    assert [item.name for item in folder.iterdir()] == [path.name]  # no temporary left behind


def test_an_unwritable_folder_costs_only_the_cache(tmp_path: Path, library: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    reader = ElfReader(open_cache(str(blocker / "cache")))
    assert reader.dynamic(str(library)) == read_elf_dynamic(str(library))
    reader.save()  # must not raise


def test_caching_can_be_turned_off_and_moved() -> None:
    assert default_cache_dir({"FALLBACK_DOCTOR_CACHE_DIR": "off"}) is None
    assert default_cache_dir({"FALLBACK_DOCTOR_CACHE_DIR": ""}) is None
    assert default_cache_dir({"FALLBACK_DOCTOR_CACHE_DIR": "/x/y"}) == "/x/y"
    assert default_cache_dir({}) is not None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG folders")
def test_the_default_folder_is_platformdirs_user_cache_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    from platformdirs import user_cache_dir

    for value in (None, "/srv/cache", "relative/ignored"):
        if value is None:
            monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_CACHE_HOME", value)
        env = {key: item for key, item in os.environ.items() if key != "FALLBACK_DOCTOR_CACHE_DIR"}
        expected = os.path.join(user_cache_dir("gpu-fallback-doctor", appauthor=False), "facts")
        assert default_cache_dir(env) == expected


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_decode_accepts_only_its_own_shape(value: object) -> None:
    decoded = decode(value)
    if decoded is not None:
        assert decode(encode(decoded)) == decoded


@settings(max_examples=100, deadline=None)
@given(
    st.binary(max_size=300)
    | _json.map(lambda v: json.dumps({"format": "t", "version": 1, "entries": v}).encode())
)
def test_any_cache_file_content_loads_without_error(
    tmp_path_factory: pytest.TempPathFactory, content: bytes
) -> None:
    folder = tmp_path_factory.mktemp("c")
    (folder / "t.json").write_bytes(content)
    os.chmod(folder / "t.json", 0o600)
    cache = FactCache("t", 1, str(folder), decode)
    assert cache.get("/no/such/file", (1, 2, 3, 4)) is None  # loading it must not raise
    assert cache.misses == 1


def test_only_the_entries_asked_for_are_checked_and_bad_ones_are_not_carried_over(tmp_path: Path) -> None:
    """A full cache file costs a run its parsing, not a check of every entry (quick diagnosis)."""
    checked: list[object] = []

    def validate(value: object) -> object | None:
        checked.append(value)
        return value if isinstance(value, int) else None

    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    digest = "d" * 64
    entries: dict[str, object] = {"/lib/bad.so": [[1, 1, 1, 1], digest, "not an int"]}
    entries.update(
        {f"/lib/{index}.so": [[1, index, 2, 3], digest, index] for index in range(MAX_ENTRIES + 50)}
    )
    path = folder / "facts.json"
    path.write_text(json.dumps({"format": "facts", "version": 1, "entries": entries}))
    os.chmod(path, 0o600)

    cache = FactCache("facts", 1, str(folder), validate)
    assert cache.get("/lib/7.so", (1, 7, 2, 3)) == 7
    assert checked == [7]
    cache.put("/lib/new.so", (9, 9, 9, 9), (9, 9, 9, 9), 99, digest)
    cache.save(lambda value: value)

    written = json.loads(path.read_text())["entries"]
    assert len(written) == MAX_ENTRIES
    assert written["/lib/new.so"] == [[9, 9, 9, 9], digest, 99] and "/lib/7.so" in written
    assert "/lib/bad.so" not in written  # checked before it is written back, and dropped
