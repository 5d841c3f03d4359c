"""Redaction never changes what a fix says: every scenario's bundle, exported, reads the same.

Each scenario of tests/scenarios (its ``diagnose --json`` document), the Bareun-like installations
(a real CPU-only ONNX Runtime in libPath, no licence file yet) and the planted document of
tests/core/bundle (real secrets in every form) is exported as a bundle with redaction on, and
each finding's fix, verify line, summary, commands and script in report.json is compared with the
document's own: word for word, apart from the masked values themselves ("[REDACTED]", a
pseudonym such as host-1). A value is masked in every place or in none.
"""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import scenario_runs as runs
from fallback_doctor.core.bundle.export import (
    BundleOptions,
    extras_from_document,
    prepare_bundle,
    write_bundle,
)
from fallback_doctor.core.language.texts import finding_words
from fallback_doctor.core.redaction.detect_keys import MARKER
from fallback_doctor.core.redaction.words import is_common_word

pytestmark = pytest.mark.scenario

_MASKED = re.compile(r"\[REDACTED\]|(?:host|user|ip|serial|gpu-uuid|uuid|mac|email)-\d+")


def _exported(document: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """The report.json of the bundle exported from ``document`` (redaction on, the default)."""
    preview = prepare_bundle(document, extras_from_document(document), BundleOptions())
    target = tmp_path / f"bundle-{len(list(tmp_path.iterdir()))}.zip"
    write_bundle(preview, target, mapping_directory=tmp_path / "mappings")
    with zipfile.ZipFile(target) as archive:
        exported: dict[str, Any] = json.loads(archive.read("report.json"))
    return exported


def _fix_lines(finding: dict[str, Any]) -> dict[str, str]:
    """Everything a finding tells the technician to do, by where it stands."""
    lines: dict[str, str] = {}
    for lang in ("en", "ko"):  # the words as every language shows them (from the finding's key)
        words = finding_words(finding, lang)
        for part in ("fix", "verify"):
            lines[f"texts.{lang}.{part}"] = str(words.get(part) or "")
    remediation = finding.get("remediation") or {}
    lines["summary"] = str(remediation.get("summary") or "")
    lines["verify"] = str(remediation.get("verify") or "")
    lines["script"] = str(remediation.get("script") or "")
    for index, command in enumerate(remediation.get("commands") or []):
        lines[f"commands[{index}]"] = str(command)
    return lines


def differences(before: str, after: str) -> list[str]:
    """The words ``after`` changed, less those that are a masked value ([] when it reads the same)."""
    if before == after:
        return []
    pattern = "".join(
        r"(.+?)" if _MASKED.fullmatch(piece) else re.escape(piece)
        for piece in re.split(f"({_MASKED.pattern})", after)
        if piece
    )
    found = re.fullmatch(pattern, before, re.DOTALL)
    if found is None:
        return [f"{before!r} -> {after!r}"]
    said = [
        f"the ordinary word {value!r} masked: {after!r}" for value in found.groups() if is_common_word(value)
    ]
    # The masked value is masked wherever it stands: nothing it replaced is left in the clear.
    return said + [
        f"{value!r} masked once, in the clear elsewhere: {after!r}"
        for value in found.groups()
        if value in after
    ]


def _check(document: dict[str, Any], tmp_path: Path) -> int:
    exported = _exported(document, tmp_path)
    assert [f["id"] for f in exported["findings"]] == [f["id"] for f in document["findings"]]
    compared = 0
    problems: list[str] = []
    for before, after in zip(document["findings"], exported["findings"], strict=True):
        theirs = _fix_lines(after)
        for where, line in _fix_lines(before).items():
            problems.extend(f"{before['id']} {where}: {said}" for said in differences(line, theirs[where]))
            compared += bool(line)
    assert problems == []
    return compared


@pytest.mark.parametrize("scenario_id", sorted(runs.SCENARIOS))
def test_a_scenario_s_fixes_read_the_same_after_redaction(
    scenario_id: str, diagnosis, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    assert _check(diagnosis(scenario_id).doc, tmp_path) >= 1


@pytest.mark.parametrize("provider", ["cuda", "cpu"])
def test_a_bareun_like_installation_s_fixes_read_the_same(tmp_path: Path, provider: str) -> None:
    root, document = runs.bareun_like_document(tmp_path / "site", provider)
    (tmp_path / "out").mkdir()
    assert _check(document, tmp_path / "out") >= 4
    exported = _exported(document, tmp_path / "out")
    issues = exported["environment"]["target"]["config_issues"]
    licence = [i for i in issues if i["code"] == "path_missing.licenseFile"]
    if provider == "cuda":  # the libPath's finding is the first cause; the licence file is there too
        assert licence and licence[0]["key"] == "licenseFile"
        assert str(root / "var" / "license.pem") in json.dumps(exported)
        assert (
            '"licenseFile": "${BAREUN_ROOT}/var/license.pem"'
            in exported["environment"]["target"]["config_text"]
        )


def test_the_planted_secrets_are_masked_and_every_fix_reads_the_same(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "core" / "bundle"))
    from bundle_plants import planted_document

    assert _check(planted_document(), tmp_path) >= 1


def test_the_comparison_can_fail() -> None:
    """What the issue saw is caught: an ordinary word masked, a value masked in one place only."""
    assert differences("Register the API key: run the server", f"Register the API key: {MARKER} the server")
    assert differences("check that /srv/a/license.pem exists", f"check that {MARKER} exists") == []
    assert differences(
        "ls /srv/a/license.pem; cat /srv/a/license.pem", f"ls {MARKER}; cat /srv/a/license.pem"
    )
    assert differences("run it", "walk it")
