"""Export: nothing planted reaches any member in any encoding; preview, bounds, atomic no-clobber writes."""

from __future__ import annotations

import argparse
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest
from bundle_plants import (
    HOST,
    IDENTITIES,
    PLANTED,
    SECRETS,
    USER,
    leaks_in_zip,
    planted_document,
    planted_extras,
)
from fallback_doctor.cli.bundle import export_from_cli
from fallback_doctor.core.bundle.export import prepare_bundle
from fallback_doctor.core.bundle.manifest import sha256_of
from fallback_doctor.core.bundle.preview import BundleOptions, ExtraMember, Limits
from fallback_doctor.core.bundle.preview_text import render_preview
from fallback_doctor.core.bundle.safe_open import open_bundle, verify_bundle
from fallback_doctor.core.bundle.write import BundleExistsError, write_bundle

OPTIONS = BundleOptions(redact_more=(SECRETS["redact_more"],), created="2026-01-02T03:04:05+00:00")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return planted_document()


@pytest.fixture
def mapping_dir(tmp_path: Path) -> Path:
    return tmp_path / "mappings"


def _export(document: dict[str, Any], tmp_path: Path, mapping_dir: Path, **kwargs: Any) -> Path:
    preview = prepare_bundle(document, planted_extras(), kwargs.pop("options", OPTIONS))
    target = tmp_path / "bundle.zip"
    write_bundle(preview, target, mapping_directory=mapping_dir, **kwargs)
    return target


def test_the_plants_are_really_in_the_inputs(document: dict[str, Any]) -> None:
    """Guard against a vacuous test: every planted value is present before export."""
    text = json.dumps(document) + "".join(
        str(extra.data) if isinstance(extra.data, str) else "" for extra in planted_extras()
    )
    for label in ("user", "host", "ipv4", "gpu_uuid", "license", "bareun", "env_secret", "redact_more"):
        assert PLANTED[label] in text, label


def test_nothing_planted_reaches_any_member(
    document: dict[str, Any], tmp_path: Path, mapping_dir: Path
) -> None:
    bundle = _export(document, tmp_path, mapping_dir)
    assert leaks_in_zip(bundle, PLANTED) == []
    # The mapping stays here, and holds the real values for the technician.
    mapping_files = list(mapping_dir.glob("*.json"))
    assert len(mapping_files) == 1
    assert oct(mapping_files[0].stat().st_mode & 0o777) == "0o600"
    mapping = json.loads(mapping_files[0].read_text())
    assert mapping["user"][USER].startswith("user-")
    with zipfile.ZipFile(bundle) as archive:
        assert all("mapping" not in name for name in archive.namelist())


def test_pseudonyms_are_consistent_across_members(
    document: dict[str, Any], tmp_path: Path, mapping_dir: Path
) -> None:
    preview = prepare_bundle(document, planted_extras(), OPTIONS)
    host = preview.pseudonyms.get("host", HOST)
    user = preview.pseudonyms.get("user", USER)
    uuid = preview.pseudonyms.get("gpu-uuid", IDENTITIES["gpu_uuid"])
    config = preview.member("config/bareun.yml").redacted
    log = next(m for m in preview.members if m.kind == "log" and "started by" in m.redacted).redacted
    report = preview.member("report.json").redacted
    assert f"hostname: {host}" in config
    assert f"started by {user} on {host}" in log
    assert f"/home/{user}/bareun" in report and uuid in report
    assert uuid in preview.member("environment.json").redacted
    # The log named after the host is renamed too.
    assert any(m.name == f"logs/bareun-{host}.log" for m in preview.members)


def test_report_reads_after_redaction(document: dict[str, Any], tmp_path: Path, mapping_dir: Path) -> None:
    bundle = _export(document, tmp_path, mapping_dir)
    opened = open_bundle(bundle)
    assert opened.integrity_problems == ()
    assert opened.document["verdict"] == document["verdict"]
    assert [f["id"] for f in opened.document["findings"]] == [f["id"] for f in document["findings"]]
    env = opened.document["environment"]["environment"]
    assert "AWS_SECRET_ACCESS_KEY" not in env and "HOSTNAME" not in env and "USER" not in env
    assert env["BAREUN_API_KEY"] == "[REDACTED]"
    assert env["LANG"] == "ko_KR.UTF-8" and "/usr/local/cuda/bin" in env["PATH"]
    evidence = opened.document["findings"][-1]["evidence"]
    assert evidence[0]["value"] == "[REDACTED]"  # labelled licenseKey
    assert evidence[1]["value"].startswith("serial-")
    manifest = opened.manifest
    assert manifest["redaction"]["enabled"] is True
    assert manifest["redaction"]["counts"]["user"] >= 1
    assert manifest["target"]["kind"] == "python"
    assert {m["name"] for m in manifest["members"]} >= {
        "report.json",
        "report.html",
        "environment.json",
        "samples.csv",
        "config/bareun.yml",
        "probe/as_is.stderr.txt",
    }
    forms = {m["name"]: m["form"] for m in manifest["members"]}
    assert forms["logs/rotated.log.1"] == "gzip+utf-8"
    assert any(form == "utf-16" for form in forms.values())


def test_config_text_in_the_report_is_redacted(document: dict[str, Any], tmp_path: Path) -> None:
    """The configuration's text rides in report.json (the configuration page shows it): redacted there too."""
    planted = json.loads(json.dumps(document))
    config_text = json.dumps(
        {
            "licenseFile": f"/home/{USER}/bareun/var/license.pem",
            "apiKey": SECRETS["bareun"],
            "password": SECRETS["password"],
            "database": f"postgres://bareun:{SECRETS['url_password']}@db.corp.internal:5432/bareun",
            "address": {"ipAddr": IDENTITIES["ipv4"], "port": 5656},
            "executionProvider": {"provider": "cuda"},
        },
        indent=2,
    )
    planted["environment"]["target"]["config_text"] = config_text
    planted["environment"]["target"]["config_key_lines"] = {"executionProvider": 10, "licenseFile": 2}
    for value in (SECRETS["bareun"], SECRETS["password"], SECRETS["url_password"], USER):
        assert value in json.dumps(planted)
    preview = prepare_bundle(planted, [], OPTIONS)
    target = tmp_path / "config-text.zip"
    write_bundle(preview, target, mapping_directory=tmp_path / "mappings")
    with zipfile.ZipFile(target) as archive:
        report = json.loads(archive.read("report.json"))
    kept = report["environment"]["target"]["config_text"]
    for label in ("bareun", "password", "url_password"):
        assert SECRETS[label] not in kept, label
    assert USER not in kept and IDENTITIES["ipv4"] not in kept
    assert '"executionProvider"' in kept and kept.count("\n") == config_text.count("\n")
    assert leaks_in_zip(target, PLANTED) == []


def test_export_then_open_reproduces_the_report_unredacted(
    document: dict[str, Any], tmp_path: Path, mapping_dir: Path
) -> None:
    options = BundleOptions(redact=False, created="2026-01-02T03:04:05+00:00")
    bundle = _export(document, tmp_path, mapping_dir, options=options)
    opened = open_bundle(bundle)
    assert opened.document == json.loads(json.dumps(document))
    assert opened.manifest["redaction"]["enabled"] is False
    assert "deliberately" in opened.manifest["redaction"]["note"]
    assert not opened.redacted
    assert "Redaction was turned OFF" in opened.text("report.html")
    assert not mapping_dir.exists()


def test_html_is_self_contained(document: dict[str, Any], tmp_path: Path, mapping_dir: Path) -> None:
    bundle = _export(document, tmp_path, mapping_dir)
    page = open_bundle(bundle).text("report.html")
    assert page.startswith("<!DOCTYPE html>")
    assert "default-src 'none'" in page
    assert "<script" not in page and "src=" not in page and "href=" not in page
    assert "<svg" in page  # the utilization graph from samples.csv
    for finding in document["findings"][:3]:
        assert finding["id"] in page
    assert "Verdict" in page


def test_preview_spans_point_at_what_is_replaced(document: dict[str, Any]) -> None:
    preview = prepare_bundle(document, planted_extras(), OPTIONS)
    kinds: set[str] = set()
    for member in preview.members:
        for redaction in member.redactions:
            kinds.add(redaction.kind)
            if redaction.end > redaction.start:
                replaced = member.original[redaction.start : redaction.end]
                assert replaced, (member.name, redaction)
                assert replaced != redaction.replacement
    config = preview.member("config/bareun.yml")
    spans = {config.original[r.start : r.end] for r in config.redactions}
    assert SECRETS["license"] in spans and SECRETS["bareun"] in spans and HOST in spans
    report = preview.member("report.json")
    assert any(report.original[r.start : r.end] == USER for r in report.redactions)
    assert {"password", "user", "host", "ip", "gpu-uuid", "private-key", "bearer-token", "extra"} <= kinds
    listing = render_preview(preview)
    assert "nothing written" in listing and "config/bareun.yml" in listing
    for value in PLANTED.values():
        assert value not in listing


def test_exclude_and_redact_more(document: dict[str, Any], tmp_path: Path) -> None:
    options = BundleOptions(
        exclude=frozenset({"probe/as_is.stdout.txt", "report.json"}), redact_more=("A100",)
    )
    preview = prepare_bundle(document, planted_extras(), options)
    assert not preview.member("probe/as_is.stdout.txt").included
    assert preview.member("report.json").included  # cannot be left out
    assert "A100" not in preview.member("environment.json").redacted
    result = write_bundle(preview, tmp_path / "b.zip", mapping_directory=tmp_path / "m")
    names = [m["name"] for m in result.manifest["members"]]
    assert "probe/as_is.stdout.txt" not in names
    assert result.manifest["excluded"][0]["member"] == "probe/as_is.stdout.txt"


def test_bounds_cut_logs_and_say_so(document: dict[str, Any], tmp_path: Path) -> None:
    big_log = "".join(f"line {i} from {USER}\n" for i in range(20000))
    limits = Limits(log=50_000, total=400_000)
    options = BundleOptions(limits=limits)
    extras = [ExtraMember("big.log", big_log, "log"), ExtraMember("other.log", big_log, "log")]
    preview = prepare_bundle(document, extras, options)
    log = preview.member("logs/big.log")
    assert len(log.redacted.encode()) <= 50_000 + 5_000  # pseudonyms may be longer than what they replace
    assert "line 19999" in log.redacted and "line 0 " not in log.redacted  # the end of a log is kept
    result = write_bundle(preview, tmp_path / "b.zip", mapping_directory=tmp_path / "m")
    cut = {c["member"]: c for c in result.manifest["cut"]}
    assert "logs/big.log" in cut and "end" in cut["logs/big.log"]["why"]
    assert cut["logs/big.log"]["original_size"] > cut["logs/big.log"]["kept_size"]
    total = sum(m["size"] for m in result.manifest["members"])
    assert total <= limits.total


def test_total_bound_shortens_the_largest(document: dict[str, Any]) -> None:
    log = "x" * 300_000
    preview = prepare_bundle(
        document, [ExtraMember("a.log", log, "log")], BundleOptions(limits=Limits(total=200_000))
    )
    sizes = sum(len(m.redacted.encode()) for m in preview.included())
    assert sizes <= 200_000
    assert any(cut.member == "logs/a.log" and "total" in cut.why for cut in preview.cuts)
    # Shortened before redaction (memory stays bounded): the text as read is already within it.
    assert len(preview.member("logs/a.log").original.encode()) <= 200_000


def test_never_overwrites_without_force(document: dict[str, Any], tmp_path: Path) -> None:
    target = tmp_path / "bundle.zip"
    target.write_bytes(b"precious")
    preview = prepare_bundle(document, (), BundleOptions())
    with pytest.raises(BundleExistsError):
        write_bundle(preview, target, mapping_directory=tmp_path / "m")
    assert target.read_bytes() == b"precious"
    write_bundle(preview, target, force=True, mapping_directory=tmp_path / "m")
    assert zipfile.is_zipfile(target)
    assert verify_bundle(target).ok
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_a_failed_write_leaves_no_file(
    document: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    preview = prepare_bundle(document, (), BundleOptions())

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space"):
        write_bundle(preview, tmp_path / "bundle.zip", mapping_directory=tmp_path / "m")
    assert list(tmp_path.iterdir()) == []


def test_manifest_lists_every_member_with_its_hash(document: dict[str, Any], tmp_path: Path) -> None:
    preview = prepare_bundle(document, planted_extras(), OPTIONS)
    result = write_bundle(preview, tmp_path / "b.zip", mapping_directory=tmp_path / "m")
    with zipfile.ZipFile(result.path) as archive:
        names = archive.namelist()
        assert names[0] == "manifest.json"
        for entry in result.manifest["members"]:
            data = archive.read(entry["name"])
            assert entry["size"] == len(data) and entry["sha256"] == sha256_of(data)
        assert set(names) == {"manifest.json", *(m["name"] for m in result.manifest["members"])}
    assert result.manifest["schema"] == "gpu-fallback-doctor/bundle"
    assert result.manifest["created"] == "2026-01-02T03:04:05+00:00"


def _args(tmp_path: Path, **kwargs: Any) -> argparse.Namespace:
    values = {
        "bundle": str(tmp_path / "out.zip"),
        "force": False,
        "dry_run": False,
        "no_redact": False,
        "redact_more": [],
        "json": False,
        "lang": None,
    }
    values.update(kwargs)
    return argparse.Namespace(**values)


def test_cli_dry_run_writes_nothing(
    document: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    code = export_from_cli(document, _args(tmp_path, dry_run=True), extras=planted_extras())
    assert code == 0
    out = capsys.readouterr().out
    assert "report.json" in out and "logs/" in out and "Redactions" in out
    for value in PLANTED.values():
        if value != SECRETS["redact_more"]:
            assert value not in out
    assert list(tmp_path.iterdir()) == []


def test_cli_writes_then_refuses_to_overwrite(
    document: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert export_from_cli(document, _args(tmp_path), extras=planted_extras()) == 0
    assert verify_bundle(tmp_path / "out.zip").ok
    assert "mapping kept on this machine" in capsys.readouterr().err
    assert list((tmp_path / "data").rglob("*.json"))
    assert export_from_cli(document, _args(tmp_path), extras=()) == 2
    assert "already exists" in capsys.readouterr().err
    assert export_from_cli(document, _args(tmp_path, force=True, no_redact=True), extras=()) == 0
    assert open_bundle(tmp_path / "out.zip").manifest["redaction"]["enabled"] is False
