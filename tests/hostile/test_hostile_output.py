"""Output safety: escape sequences from documents are shown, not obeyed; JSON is whole or absent."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fallback_doctor.cli.output import json_text, write_json
from fallback_doctor.core.views.escape import visible
from hypothesis import example, given
from hypothesis import strategies as st

OSC_TITLE = "\x1b]0;PWNED\x07"
OSC_CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"
CLEAR = "\x1b[2J\x1b[H"
C1_CSI = "\x9b2J"
BIDI = "\u202egnp.exe"


@pytest.mark.parametrize("attack", [OSC_TITLE, OSC_CLIPBOARD, CLEAR, C1_CSI, BIDI, "a\rb", "\x08\x7f"])
def test_control_characters_become_visible(attack: str) -> None:
    shown = visible(f"title {attack} end")
    assert not any(ord(char) < 32 and char not in "\n\t" for char in shown)
    assert not any(0x7F <= ord(char) <= 0x9F for char in shown)
    assert "\u202e" not in shown
    assert "\\x1b" in shown or "\\x9b" in shown or "\\u202e" in shown or "\\x0d" in shown or "\\x08" in shown


def test_newlines_and_tabs_and_korean_stay() -> None:
    assert visible("줄 하나\n\tline two") == "줄 하나\n\tline two"


def _containers(children: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)


JSON_LIKE = st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(), _containers)


@given(JSON_LIKE)
@example({"note": "x\ud800y", "title": OSC_TITLE + C1_CSI + BIDI, "nan": float("nan")})
def test_json_output_is_always_whole_valid_json(document: object) -> None:
    stream = io.StringIO()
    code = write_json(document, stream)
    assert code == 0
    text = stream.getvalue()
    json.loads(text)  # whole and valid
    text.encode("utf-8")  # no lone surrogate left raw
    assert "\x1b" not in text and "\x9b" not in text and "\u202e" not in text


def test_a_document_that_is_not_json_prints_nothing() -> None:
    stream = io.StringIO()
    assert write_json({"x": object()}, stream) == 2
    assert stream.getvalue() == ""


def test_json_text_keeps_the_surrogate_as_an_escape() -> None:
    assert json.loads(json_text({"v": "x\ud800y"}))["v"] == "x\ud800y"


def _bareun(tmp_path: Path, note: str) -> Path:
    root = tmp_path / "bareun"
    for folder in ("config", "lib", "var/logs"):
        (root / folder).mkdir(parents=True)
    (root / "config" / "bareun.json").write_text(
        '{"libPath": "${BAREUN_ROOT}/lib", "logPath": "${BAREUN_ROOT}/var/logs", '
        f'"note": {json.dumps(note)}, "modelPath": {json.dumps(note)}, '
        '"executionProvider": {"provider": "cuda"}}',
        encoding="utf-8",
    )
    (root / "var" / "logs" / "bareun.log").write_text(f"error {OSC_TITLE} {CLEAR}\n", encoding="utf-8")
    return root


def _diagnose(root: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "fallback_doctor",
            "diagnose",
            "--target",
            "bareun",
            "--bareun-root",
            str(root),
            "--quick",
            *list(extra),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_diagnose_json_with_a_lone_surrogate_in_bareun_json(tmp_path: Path) -> None:
    """The issue's case: "\\ud800" in bareun.json gave UnicodeEncodeError and half a document."""
    root = _bareun(tmp_path, "x\\ud800y " + OSC_TITLE)
    done = _diagnose(root, "--json")
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    assert done.returncode in (0, 1)
    json.loads(done.stdout)
    assert b"\x1b" not in done.stdout


def test_diagnose_text_shows_escapes_from_bareun_json(tmp_path: Path) -> None:
    root = _bareun(tmp_path, OSC_TITLE + OSC_CLIPBOARD + CLEAR)
    done = _diagnose(root)
    assert b"Traceback" not in done.stderr
    assert b"\x1b" not in done.stdout and b"\x07" not in done.stdout
    assert b"\x1b" not in done.stderr


def test_bundle_show_does_not_write_a_bundles_escapes(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "core" / "bundle"))
    from bundle_plants import real_document
    from fallback_doctor.core.bundle.export import prepare_bundle
    from fallback_doctor.core.bundle.preview import BundleOptions
    from fallback_doctor.core.bundle.write import write_bundle

    document = real_document()
    attack = f"{OSC_TITLE}{CLEAR}GPU VERIFIED{OSC_CLIPBOARD}"
    for finding in document["findings"]:
        finding["title"] = finding["detail"] = attack
        for evidence in finding.get("evidence") or []:
            evidence["value"] = attack
    preview = prepare_bundle(document, (), BundleOptions(use_local_identity=False))
    target = tmp_path / "b.zip"
    write_bundle(preview, target, mapping_directory=tmp_path / "maps")
    for extra in ([], ["--verbose"], ["--json"]):
        done = subprocess.run(
            [sys.executable, "-m", "fallback_doctor", "bundle", "show", str(target), *extra],
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert b"\x1b" not in done.stdout and b"\x07" not in done.stdout
        assert b"\x1b" not in done.stderr
        if extra:  # the one-screen summary leaves out the evidence, where the payload sits
            assert b"PWNED" in done.stdout  # shown, as an escape
