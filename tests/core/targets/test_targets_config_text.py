"""The configuration's text and the lines of the keys that matter, kept in TargetFacts for the wizard."""

from __future__ import annotations

import json

from fallback_doctor.core.readers.targets.bareun_config import config_text_for_report, read_config_bytes
from fallback_doctor.core.readers.targets.bareun_reader import CONFIG_TEXT_LIMIT, KEY_LINE_KEYS
from fallback_doctor.core.readers.targets.resolvers import bareun_target
from fallback_doctor.core.readers.targets.spec import TargetKind, TargetSpec

CONFIG = {
    "version": 3000000,
    "libPath": "${BAREUN_ROOT}/lib",
    "modelPath": "${BAREUN_ROOT}/models",
    "licenseFile": "${BAREUN_ROOT}/var/license.pem",
    "logPath": "${BAREUN_ROOT}/var/logs",
    "executionProvider": {"provider": "cuda"},
}


def _lines(text: str, key: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), start=1) if f'"{key}"' in line)


def test_text_and_key_lines_of_a_well_formed_file() -> None:
    text = json.dumps(CONFIG, indent=2)
    config = read_config_bytes("/x/bareun.json", text.encode(), {"BAREUN_ROOT": "/x"}, "/x")
    assert config.text == text
    assert config.key_lines == {key: _lines(text, key) for key in KEY_LINE_KEYS}


def test_key_lines_of_a_malformed_file_by_their_text() -> None:
    text = json.dumps(CONFIG, indent=2).replace('"version": 3000000,', '"version": 3000000')
    config = read_config_bytes("/x/bareun.json", text.encode(), {}, "/x")
    assert config.issues[0].code == "malformed"
    assert config.text == text
    assert config.key_lines["libPath"] == _lines(text, "libPath")
    assert config.key_lines["executionProvider"] == _lines(text, "executionProvider")


def test_undecodable_bytes_are_replaced_in_the_text() -> None:
    data = '{"libPath": "/opt/bareun/lib", "note": "\uc124\uc815"}'.encode("cp949")
    config = read_config_bytes("/x/bareun.json", data, {}, "/x")
    assert config.text is not None and "\ufffd" in config.text and '"libPath"' in config.text


def test_a_long_file_is_cut_at_a_line_with_a_note() -> None:
    text = "{\n" + "".join(f'  "k{i}": "{"x" * 60}",\n' for i in range(6000)) + '  "end": 1\n}\n'
    kept, note = config_text_for_report(text)
    assert kept is not None and note is not None
    assert len(kept) <= CONFIG_TEXT_LIMIT and kept.endswith("\n") and text.startswith(kept)
    assert str(len(text)) in note
    assert config_text_for_report("{}") == ("{}", None)
    assert config_text_for_report(None) == (None, None)


def test_target_facts_carry_the_text(tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "bareun"
    (root / "config").mkdir(parents=True)
    text = json.dumps(CONFIG, indent=2)
    (root / "config" / "bareun.json").write_text(text, encoding="utf-8")
    facts = bareun_target(
        TargetSpec(kind=TargetKind.BAREUN), {}, str(root), "--bareun-root", load_library=False
    )
    assert facts.config_text == text
    assert facts.config_key_lines["executionProvider"] == _lines(text, "executionProvider")
    missing = bareun_target(
        TargetSpec(kind=TargetKind.BAREUN, config=str(tmp_path / "none.json")), {}, str(root), "--config"
    )
    assert missing.config_text is None and missing.config_key_lines == {}
