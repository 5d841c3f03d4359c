"""Opening untrusted bundles: each malicious zip is refused, tampering fails verify, CLI exit codes."""

from __future__ import annotations

import json
import os
import random
import struct
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bundle_plants import PLANTED, leaks_in_zip, planted_document, planted_extras
from fallback_doctor.cli.bundle import main as bundle_main
from fallback_doctor.core.bundle.export import prepare_bundle
from fallback_doctor.core.bundle.preview import BundleOptions
from fallback_doctor.core.bundle.safe_open import (
    BundleRefusedError,
    OpenLimits,
    open_bundle,
    verify_bundle,
)
from fallback_doctor.core.bundle.write import write_bundle
from fallback_doctor.core.views.text_report import render_text


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return planted_document()


@pytest.fixture(scope="module")
def good_bundle(document: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("good")
    preview = prepare_bundle(document, planted_extras(), BundleOptions())
    return write_bundle(preview, folder / "good.zip", mapping_directory=folder / "m").path


def _members(bundle: Path) -> list[tuple[zipfile.ZipInfo, bytes]]:
    with zipfile.ZipFile(bundle) as archive:
        return [(info, archive.read(info)) for info in archive.infolist()]


def _rebuild(bundle: Path, target: Path, change: Callable[[str, bytes], bytes | None], extra=()) -> Path:  # type: ignore[no-untyped-def]
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info, data in _members(bundle):
            new = change(info.filename, data)
            if new is not None:
                out.writestr(info, new)
        for name, data in extra:
            out.writestr(name, data)
    return target


def _refused(
    path: Path, *, member: str | None = None, words: str = "", limits: OpenLimits | None = None
) -> str:
    with pytest.raises(BundleRefusedError) as caught:
        open_bundle(path, limits)
    message = str(caught.value)
    if member is not None:
        assert member in message, message
    if words:
        assert words in message, message
    return message


# --------------------------------------------------------------------------------------------


def test_export_then_open_reproduces_the_report(good_bundle: Path) -> None:
    opened = open_bundle(good_bundle)
    assert opened.integrity_problems == ()
    assert "another machine" in opened.origin()
    text = render_text(opened.document)
    assert text.startswith("Verdict:")
    assert opened.samples_csv is not None and opened.samples_csv.startswith("timestamp,")
    assert verify_bundle(good_bundle).ok


def test_the_leak_search_is_not_vacuous(document: dict[str, Any], tmp_path: Path) -> None:
    """Unredacted, the search finds every plant, in every hidden form it was planted in."""
    preview = prepare_bundle(document, planted_extras(), BundleOptions(redact=False))
    bundle = write_bundle(preview, tmp_path / "raw.zip").path
    leaks = leaks_in_zip(bundle, PLANTED)
    for label in PLANTED:
        assert any(leak.startswith(label) for leak in leaks), label


def test_tampered_member_fails_verify(
    good_bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def change(name: str, data: bytes) -> bytes:
        if name == "report.json":
            report = json.loads(data)
            report["verdict"] = "gpu_verified"
            return json.dumps(report).encode()
        return data

    tampered = _rebuild(good_bundle, tmp_path / "tampered.zip", change)
    result = verify_bundle(tampered)
    assert not result.ok and any(p.startswith("report.json") for p in result.problems)
    assert bundle_main(["verify", str(tampered)]) == 1
    assert "report.json" in capsys.readouterr().err
    # Opening still works (it is a bundle), but says the content was changed.
    assert open_bundle(tampered).integrity_problems


def test_added_and_removed_members_fail_verify(good_bundle: Path, tmp_path: Path) -> None:
    added = _rebuild(good_bundle, tmp_path / "added.zip", lambda n, d: d, extra=[("logs/extra.log", b"hi")])
    assert any("logs/extra.log" in p for p in verify_bundle(added).problems)
    removed = _rebuild(good_bundle, tmp_path / "removed.zip", lambda n, d: None if n == "samples.csv" else d)
    assert any("samples.csv" in p and "missing" in p for p in verify_bundle(removed).problems)


def test_flipped_bytes_fail_verify(good_bundle: Path, tmp_path: Path) -> None:
    data = bytearray(good_bundle.read_bytes())
    with zipfile.ZipFile(good_bundle) as archive:
        info = archive.getinfo("report.json")
    offset = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size // 2
    data[offset] ^= 0xFF
    flipped = tmp_path / "flipped.zip"
    flipped.write_bytes(bytes(data))
    result = verify_bundle(flipped)
    assert not result.ok and "report.json" in result.problems[0]
    assert bundle_main(["verify", str(flipped)]) == 1


def test_cli_show_and_verify(good_bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bundle_main(["show", str(good_bundle), "--lang", "en"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("Verdict:")
    assert "another machine" in captured.err
    assert bundle_main(["show", "--json", str(good_bundle)]) == 0
    assert json.loads(capsys.readouterr().out)["schema"] == "gpu-fallback-doctor/report"
    assert bundle_main(["verify", str(good_bundle)]) == 0
    assert "OK" in capsys.readouterr().out


def test_not_a_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = tmp_path / "notes.zip"
    text.write_text("just text")
    _refused(text, words="not a zip")
    assert bundle_main(["show", str(text)]) == 2
    assert bundle_main(["verify", str(text)]) == 2
    assert bundle_main(["verify", str(tmp_path / "missing.zip")]) == 2
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("readme.txt", "hello")
    _refused(other, member="manifest.json", words="not a fallback-doctor bundle")
    assert bundle_main(["verify", str(other)]) == 2
    capsys.readouterr()


# --------------------------------------------------------------------------------------------
# Malicious zips, built here with zipfile and raw bytes


def _with_member(good_bundle: Path, target: Path, info: zipfile.ZipInfo | str, data: bytes) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
            for old_info, old_data in _members(good_bundle):
                out.writestr(old_info, old_data)
            out.writestr(info, data)
    return target


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("../../evil.sh", "traversal"),
        ("logs/../../evil.sh", "traversal"),
        ("/etc/cron.d/evil", "absolute"),
        ("C:/Windows/evil.dll", "absolute"),
        ("..\\..\\evil.bat", "backslash"),
        ("logs/\x01bell", "control"),
    ],
)
def test_unsafe_names_are_refused(good_bundle: Path, tmp_path: Path, name: str, words: str) -> None:
    bundle = _with_member(good_bundle, tmp_path / "evil.zip", zipfile.ZipInfo(name), b"#!/bin/sh\n")
    _refused(bundle, words=words)
    assert bundle_main(["show", str(bundle)]) == 2
    assert not (tmp_path.parent / "evil.sh").exists()


def test_symlinks_are_refused(good_bundle: Path, tmp_path: Path) -> None:
    info = zipfile.ZipInfo("logs/link")
    info.create_system = 3
    info.external_attr = 0o120777 << 16
    bundle = _with_member(good_bundle, tmp_path / "link.zip", info, b"/etc/passwd")
    _refused(bundle, member="logs/link", words="symbolic link")


def test_directories_and_devices_are_refused(good_bundle: Path, tmp_path: Path) -> None:
    _refused(
        _with_member(good_bundle, tmp_path / "dir.zip", zipfile.ZipInfo("logs/"), b""),
        member="logs/",
        words="directory",
    )
    fifo = zipfile.ZipInfo("logs/fifo")
    fifo.create_system = 3
    fifo.external_attr = 0o010644 << 16
    _refused(
        _with_member(good_bundle, tmp_path / "fifo.zip", fifo, b"x"), member="logs/fifo", words="regular"
    )


def test_duplicate_names_are_refused(good_bundle: Path, tmp_path: Path) -> None:
    _refused(
        _with_member(good_bundle, tmp_path / "dup.zip", "report.json", b"{}"),
        member="report.json",
        words="twice",
    )
    _refused(
        _with_member(good_bundle, tmp_path / "case.zip", "Report.JSON", b"{}"),
        member="Report.JSON",
        words="case",
    )


def test_zip_bomb_by_ratio_is_refused(good_bundle: Path, tmp_path: Path) -> None:
    bundle = _with_member(good_bundle, tmp_path / "bomb.zip", "logs/zeros.log", b"\0" * (20 * 1024 * 1024))
    assert bundle.stat().st_size < 2 * 1024 * 1024
    _refused(bundle, member="logs/zeros.log", words="ratio")


def test_oversized_members_and_totals_are_refused(good_bundle: Path, tmp_path: Path) -> None:
    data = random.Random(7).randbytes(200 * 1024)  # incompressible
    bundle = _with_member(good_bundle, tmp_path / "big.zip", "logs/big.log", data)
    _refused(bundle, member="logs/big.log", words="more than", limits=OpenLimits(max_member=128 * 1024))
    _refused(bundle, words="in all", limits=OpenLimits(max_total=256 * 1024))
    _refused(bundle, words="members", limits=OpenLimits(max_members=3))


def test_a_member_that_lies_about_its_size_is_refused(good_bundle: Path, tmp_path: Path) -> None:
    """A central directory that declares a small size for a large member (bounded read, CRC/size check)."""
    bundle = _with_member(good_bundle, tmp_path / "liar.zip", "logs/liar.log", b"A" * 100_000)
    data = bytearray(bundle.read_bytes())
    with zipfile.ZipFile(bundle) as archive:
        info = archive.getinfo("logs/liar.log")
    # Patch the uncompressed size (offset 24) of this member's central directory record.
    record = data.find(b"PK\x01\x02")
    while record >= 0:
        name_length = struct.unpack_from("<H", data, record + 28)[0]
        if data[record + 46 : record + 46 + name_length] == b"logs/liar.log":
            struct.pack_into("<I", data, record + 24, 10)
            break
        record = data.find(b"PK\x01\x02", record + 4)
    assert info.file_size == 100_000
    liar = tmp_path / "liar2.zip"
    liar.write_bytes(bytes(data))
    _refused(liar, member="logs/liar.log")


def test_overlapping_entries_are_refused(good_bundle: Path, tmp_path: Path) -> None:
    """Two directory entries pointing at one local header (the overlapping-entry zip bomb)."""
    bundle = _with_member(good_bundle, tmp_path / "overlap.zip", "logs/b.log", b"B" * 5000)
    data = bytearray(bundle.read_bytes())
    with zipfile.ZipFile(bundle) as archive:
        target_offset = archive.getinfo("samples.csv").header_offset
    record = data.find(b"PK\x01\x02")
    while record >= 0:
        name_length = struct.unpack_from("<H", data, record + 28)[0]
        if data[record + 46 : record + 46 + name_length] == b"logs/b.log":
            struct.pack_into("<I", data, record + 42, target_offset)
            break
        record = data.find(b"PK\x01\x02", record + 4)
    overlap = tmp_path / "overlap2.zip"
    overlap.write_bytes(bytes(data))
    message = _refused(overlap, member="logs/b.log")
    assert "disguised" in message or "share" in message


def test_encrypted_and_unknown_compression_are_refused(good_bundle: Path, tmp_path: Path) -> None:
    bundle = _with_member(good_bundle, tmp_path / "enc.zip", "logs/secret.log", b"x" * 100)
    data = bytearray(bundle.read_bytes())
    record = data.find(b"PK\x01\x02")
    while record >= 0:
        name_length = struct.unpack_from("<H", data, record + 28)[0]
        if data[record + 46 : record + 46 + name_length] == b"logs/secret.log":
            flags = struct.unpack_from("<H", data, record + 8)[0]
            struct.pack_into("<H", data, record + 8, flags | 0x1)
            break
        record = data.find(b"PK\x01\x02", record + 4)
    encrypted = tmp_path / "enc2.zip"
    encrypted.write_bytes(bytes(data))
    _refused(encrypted, member="logs/secret.log", words="encrypted")
    bzip = tmp_path / "bzip.zip"
    with zipfile.ZipFile(bzip, "w") as out:
        for info, member_data in _members(good_bundle):
            out.writestr(info, member_data)
        out.writestr("logs/b.log", b"x" * 100, compress_type=zipfile.ZIP_BZIP2)
    _refused(bzip, member="logs/b.log", words="compression")


@pytest.mark.parametrize(
    ("member", "content", "words"),
    [
        ("report.json", b'{"schema": "gpu-fallback-doctor/report", "schema_version": 1,', "malformed JSON"),
        ("report.json", b"\xff\xfe{}", "not UTF-8"),
        ("report.json", b"[" * 5_000 + b"]" * 5_000, "malformed JSON"),
        (
            "report.json",
            b'{"schema": "gpu-fallback-doctor/report", "schema_version": 99}',
            "schema_version 99",
        ),
        ("report.json", b'{"schema": "something-else", "schema_version": 1}', "schema"),
        ("manifest.json", b"not json", "malformed JSON"),
        (
            "manifest.json",
            b'{"schema": "gpu-fallback-doctor/bundle", "schema_version": 7, "members": []}',
            "7",
        ),
        (
            "manifest.json",
            b'{"schema": "gpu-fallback-doctor/bundle", "schema_version": 1, "members": [{"name": '
            b'"../x", "size": 1, "sha256": "' + b"0" * 64 + b'"}]}',
            "traversal",
        ),
    ],
)
def test_malformed_json_and_unknown_versions_are_refused(
    good_bundle: Path, tmp_path: Path, member: str, content: bytes, words: str
) -> None:
    bundle = _rebuild(good_bundle, tmp_path / "bad.zip", lambda n, d: content if n == member else d)
    _refused(bundle, member=member, words=words)
    assert bundle_main(["show", str(bundle)]) == 2


def test_a_report_with_broken_findings_is_refused(good_bundle: Path, tmp_path: Path) -> None:
    def change(name: str, data: bytes) -> bytes:
        if name != "report.json":
            return data
        report = json.loads(data)
        report["findings"][0]["severity"] = None
        return json.dumps(report).encode()

    _refused(_rebuild(good_bundle, tmp_path / "broken.zip", change), member="report.json", words="severity")


def test_opening_writes_nothing(good_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Members are read into memory: no file is created anywhere while opening."""
    import builtins

    real_open = builtins.open
    written: list[str] = []

    def watching_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if any(flag in mode for flag in "wax+"):
            written.append(str(file))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", watching_open)
    open_bundle(good_bundle)
    verify_bundle(good_bundle)
    assert written == []


def _with_report(good_bundle: Path, target: Path, mutate: Callable[[dict[str, Any]], None]) -> Path:
    """The bundle with report.json changed and the manifest's size and sha256 made to match it."""
    import hashlib

    members = {info.filename: data for info, data in _members(good_bundle)}
    report = json.loads(members["report.json"])
    mutate(report)
    new_report = json.dumps(report, ensure_ascii=False).encode()
    manifest = json.loads(members["manifest.json"])
    for entry in manifest["members"]:
        if entry["name"] == "report.json":
            entry["size"] = len(new_report)
            entry["sha256"] = hashlib.sha256(new_report).hexdigest()
    new_manifest = json.dumps(manifest).encode()
    return _rebuild(
        good_bundle,
        target,
        lambda n, d: new_report if n == "report.json" else new_manifest if n == "manifest.json" else d,
    )


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(report: dict[str, Any]) -> None:
        node: Any = report
        *parents, last = path.split(".")
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        if isinstance(node, dict) and last not in node and last == "remediation":
            node[last] = {}
        node[int(last) if last.isdigit() else last] = value

    return mutate


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("findings.0.text.params", 5, "findings[0].text.params"),
        ("findings.0.text.key", {"a": 1}, "findings[0].text.key"),
        ("findings.0.remediation", {"summary": 7}, "findings[0].remediation"),
        ("verdict", ["gpu_verified"], "verdict"),
        ("verdict_text.en", {"x": 1}, "verdict_text.en"),
        ("findings.0.evidence", [{"label": "a", "value": 3}], "findings[0].evidence[0].value"),
        ("inference.cpu_baseline", {"session": 1}, "inference.cpu_baseline"),
        ("schema_version", 2.0, "schema_version"),
        ("schema_version", "2", "schema_version"),
        ("schema_version", True, "schema_version"),
    ],
)
def test_a_field_of_the_wrong_type_is_refused_with_its_path_and_no_traceback(
    good_bundle: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    field: str,
    value: Any,
    shown: str,
) -> None:
    """issue 10: bundles that mutate one field made bundle show/verify raise AttributeError/TypeError."""
    bundle = _with_report(good_bundle, tmp_path / "typed.zip", _set(field, value))
    message = _refused(bundle, member="report.json")
    assert shown in message, message
    capsys.readouterr()
    assert bundle_main(["show", str(bundle)]) == 2
    assert bundle_main(["show", "--json", str(bundle)]) == 2
    assert bundle_main(["verify", str(bundle)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and shown in err, err


def test_schema_version_1_0_is_not_read_as_1(good_bundle: Path, tmp_path: Path) -> None:
    """A float 1.0 equals 1 in Python; the reader must not take it for the version it knows."""
    for value in (1.0, 2.0):
        bundle = _with_report(good_bundle, tmp_path / f"v{value}.zip", _set("schema_version", value))
        _refused(bundle, member="report.json", words="schema_version")

    def manifest_float(name: str, data: bytes) -> bytes:
        if name != "manifest.json":
            return data
        manifest = json.loads(data)
        manifest["schema_version"] = float(manifest["schema_version"])
        return json.dumps(manifest).encode()

    bundle = _rebuild(good_bundle, tmp_path / "m.zip", manifest_float)
    _refused(bundle, member="manifest.json", words="schema_version")


def test_the_untouched_bundle_is_schema_valid_and_opens(good_bundle: Path) -> None:
    """The counterpart of the refusals above: the same bundle unmutated opens (the test can fail)."""
    bundle = good_bundle
    assert open_bundle(bundle).document["schema_version"] == 2


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path in a JSON document (objects' keys and lists' indexes), the document's own first."""
    found: list[tuple[Any, ...]] = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_leaves(value, (*path, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node[:3]):
            found.extend(_leaves(value, (*path, index)))
    return found


def _replaced(document: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    copy = json.loads(json.dumps(document))
    if not path:
        return value  # type: ignore[no-any-return]
    node = copy
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return copy


@pytest.mark.parametrize(
    "examples",
    [
        300,
        pytest.param(
            10_000,
            marks=[
                pytest.mark.slow,
                pytest.mark.timeout(3600),  # about 15 minutes on two busy cores
                pytest.mark.skipif(not os.environ.get("GFD_SLOW"), reason="10,000 examples: GFD_SLOW=1 (CI)"),
            ],
            id="10000-slow",
        ),
    ],
    ids=str,
)
def test_any_field_of_any_type_is_refused_or_shown_never_a_traceback(
    good_bundle: Path, examples: int
) -> None:
    """Hypothesis over the report: one field anywhere given any JSON value. Opening refuses it with
    BundleRefusedError or accepts it, and then every view (text, HTML, the wizard's pages) renders it.
    issue 10 found 54 tracebacks in 2,000 mutated bundles; the slow run tries 10,000."""
    from fallback_doctor.core import facade
    from fallback_doctor.core.bundle.html import render_html
    from fallback_doctor.core.bundle.safe_open import validate_report
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    document = open_bundle(good_bundle).document
    paths = _leaves(document)
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
        max_leaves=6,
    )
    outcomes = {"refused": 0, "shown": 0}

    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(path=st.sampled_from(paths), value=json_values)
    def check(path: tuple[Any, ...], value: Any) -> None:
        mutated = _replaced(document, path, value)
        try:
            accepted = validate_report(mutated)
        except BundleRefusedError as error:
            refused_member = error.member
            outcomes["refused"] += 1
            assert refused_member == "report.json"
            return
        outcomes["shown"] += 1
        for lang in ("en", "ko"):
            render_text(accepted, lang)
            render_html(accepted, lang=lang)
            for view in (facade.config_view, facade.log_view, facade.stack_layers, facade.gpu_summary):
                view(accepted)
            facade.cpu_view(accepted)

    check()
    assert outcomes["refused"] and outcomes["shown"], outcomes
