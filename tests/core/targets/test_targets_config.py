"""bareun.json read with positions: malformed files, wrong types, both provider forms, ${VAR}, paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fallback_doctor.core.model.facts.target import ConfigIssue
from fallback_doctor.core.readers.targets.bareun_config import read_config_bytes
from fallback_doctor.core.readers.targets.bareun_reader import BareunConfig, expand_variables
from fallback_doctor.core.readers.targets.jsonpos import (
    JsonPositionError,
    TextPositions,
    parse_with_positions,
    plain,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PATH = "/srv/bareun/config/bareun.json"


def read(
    text: str | bytes, env: dict[str, str] | None = None, root: str | None = "/srv/bareun"
) -> BareunConfig:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return read_config_bytes(PATH, data, env or {}, root)


def codes(config: BareunConfig) -> list[str]:
    """The issue codes, without the information that executionProvider is not set."""
    return [issue.code for issue in config.issues if issue.code != "provider_not_set"]


def only(config: BareunConfig, code: str) -> ConfigIssue:
    found = [issue for issue in config.issues if issue.code == code]
    assert len(found) == 1, codes(config)
    return found[0]


# --- the position-tracking reader -----------------------------------------------------------------


def test_keys_and_values_have_their_positions() -> None:
    text = '{\n  "a": 1,\n  "b": {"c": [true, null, "x"]}\n}'
    node = parse_with_positions(text)
    b = node.value["b"]
    assert (b.line, b.column) == (3, 3)
    c = b.node.value["c"]
    assert (c.line, c.column) == (3, 9)
    assert (c.node.line, c.node.column) == (3, 14)
    assert [item.column for item in c.node.value] == [15, 21, 27]
    assert plain(node) == json.loads(text)


def test_malformed_position_is_json_modules() -> None:
    text = '{\n  "a": 1\n  "b": 2\n}'
    with pytest.raises(JsonPositionError) as caught:
        parse_with_positions(text)
    with pytest.raises(json.JSONDecodeError) as reference:
        json.loads(text)
    assert (
        (caught.value.line, caught.value.column) == (reference.value.lineno, reference.value.colno) == (3, 3)
    )


def test_duplicate_keys_last_wins() -> None:
    node = parse_with_positions('{"a": 1, "a": 2}')
    assert node.value["a"].node.value == 2
    assert node.duplicates == ("a",)


def test_line_text_handles_crlf() -> None:
    positions = TextPositions('{\r\n  "x": 1\r\n}')
    assert positions.line_text(2) == '  "x": 1'
    assert positions.position(5) == (2, 3)


# --- executionProvider in both forms ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "provider", "form"),
    [
        ('"gpu"', "gpu", "string"),
        ('"cpu"', "cpu", "string"),
        ('{"provider": "cuda"}', "cuda", "object"),
        (
            '{"provider": "tensorrt", "tensorrtOptions": {"deviceId": 0, "fp16Enable": true}}',
            "tensorrt",
            "object",
        ),
        ('{"provider": "cpu"}', "cpu", "object"),
    ],
)
def test_provider_forms(value: str, provider: str, form: str) -> None:
    config = read('{\n  "executionProvider": ' + value + "\n}")
    assert config.provider is not None
    assert (config.provider.provider, config.provider.form) == (provider, form)
    assert config.provider.line == 2
    assert not [issue for issue in config.issues if issue.severity == "error"]


def test_unknown_provider_is_an_error_at_its_key_with_a_suggestion() -> None:
    config = read('{\n  "executionProvider": {\n    "provider": "cudaa"\n  }\n}')
    issue = only(config, "provider_unknown.suggest")
    assert (issue.line, issue.column, issue.value_column) == (3, 5, 17)
    assert issue.params["suggestion"] == "cuda"
    assert issue.line_text == '    "provider": "cudaa"'
    assert config.provider is not None and config.provider.provider is None


def test_provider_case_is_a_warning_and_understood() -> None:
    config = read('{"executionProvider": "GPU"}')
    assert only(config, "provider_case").severity == "warning"
    assert config.provider is not None and config.provider.provider == "gpu"


def test_provider_of_wrong_type_and_missing_provider() -> None:
    assert codes(read('{"executionProvider": 1}')) == ["wrong_type.provider"]
    assert codes(read('{"executionProvider": {"tensorrtOptions": {}}}')) == ["provider_missing"]
    assert codes(read('{"executionProvider": {"provider": 7}}')) == ["wrong_type.string"]


def test_provider_absent_is_information() -> None:
    issue = only(read("{}"), "provider_not_set")
    assert issue.severity == "info"


# --- malformed files -------------------------------------------------------------------------------


def test_malformed_file_gives_line_and_column() -> None:
    text = '{\n  "executionProvider": "gpu",\n  "libPath": "/x",\n}\n'
    issue = only(read(text), "malformed")
    assert (issue.line, issue.column) == (4, 1)
    assert "Expecting property name" in issue.message
    assert issue.line_text == "}"


def test_windows_path_with_single_backslashes_says_why() -> None:
    issue = only(read('{"libPath": "C:\\Program Files\\bareun\\lib"}'), "malformed.backslash")
    assert (issue.line, issue.column) == (1, 16)


def test_bom_is_a_warning_and_the_rest_is_read() -> None:
    config = read(b'\xef\xbb\xbf{"executionProvider": "cpu"}')
    assert codes(config) == ["bom"]
    assert config.provider is not None and config.provider.provider == "cpu"


def test_cp949_bytes_are_reported_where_they_are() -> None:
    data = '{\n  "modelPath": "/srv/모델"\n}'.encode("cp949")
    issue = only(read(data), "not_utf8")
    assert (issue.line, issue.column) == (2, 22)


def test_top_level_must_be_an_object() -> None:
    assert codes(read("[1, 2]")) == ["not_object"]


# --- types and values ------------------------------------------------------------------------------


def test_wrong_types_and_impossible_values_point_at_the_key() -> None:
    text = (
        "{\n"
        '  "version": "3",\n'
        '  "address": {"ipAddr": "0.0.0.0", "port": 70000},\n'
        '  "hasTestWeb": "yes",\n'
        '  "libPath": 5,\n'
        '  "staticAddress": "0.0.0.0:5656",\n'
        '  "executionProvider": {"provider": "tensorrt", "tensorrtOptions": {"deviceId": -1, '
        '"maxWorkspaceSize": "lots", "fp16Enable": 1}},\n'
        '  "somethingNew": [1, 2, 3]\n'
        "}"
    )
    config = read(text)
    found = {
        (issue.code, issue.key): (issue.line, issue.column)
        for issue in config.issues
        if issue.code != "provider_not_set"
    }
    assert found == {
        ("wrong_type.integer", "version"): (2, 3),
        ("bad_value.range", "address.port"): (3, 36),
        ("wrong_type.bool", "hasTestWeb"): (4, 3),
        ("wrong_type.string", "libPath"): (5, 3),
        ("wrong_type.object", "staticAddress"): (6, 3),
        ("bad_value.minimum", "executionProvider.tensorrtOptions.deviceId"): (7, 69),
        ("bad_value.workspace", "executionProvider.tensorrtOptions.maxWorkspaceSize"): (7, 85),
        ("wrong_type.bool", "executionProvider.tensorrtOptions.fp16Enable"): (7, 113),
    }
    lines = text.split("\n")
    for issue in config.issues:
        assert issue.key is not None
        if issue.code == "provider_not_set":
            continue
        last = issue.key.rsplit(".", 1)[-1]
        assert lines[issue.line - 1][issue.column - 1 :].startswith(f'"{last}"')
    assert all(issue.severity == "error" for issue in config.issues)


def test_float_port_is_the_wrong_type() -> None:
    assert codes(read('{"address": {"port": 5656.0}}')) == ["wrong_type.integer"]


def test_empty_path_is_an_impossible_value() -> None:
    assert codes(read('{"logPath": "  "}')) == ["bad_value.empty"]


# --- ${VAR} and paths ------------------------------------------------------------------------------


def test_expand_variables() -> None:
    assert expand_variables("${BAREUN_ROOT}/lib", {}, "/opt/bareun") == ("/opt/bareun/lib", ())
    assert expand_variables("${BAREUN_ROOT}/lib", {"BAREUN_ROOT": "/b"}, "/opt/bareun") == ("/b/lib", ())
    assert expand_variables("${A}/${B}/$C", {"A": "x"}, None) == ("x/${B}/$C", ("B",))


def test_paths_are_expanded_and_checked(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "var").mkdir()
    (tmp_path / "license").mkdir()
    text = json.dumps(
        {
            "libPath": "${BAREUN_ROOT}/lib",
            "logPath": "${LOGS}/bareun",
            "modelPath": "models",
            "licenseFile": "${BAREUN_ROOT}/license",
            "webPath": "${UNSET_VARIABLE}/web",
        },
        indent=2,
    )
    config = read(text, env={"LOGS": str(tmp_path / "var")}, root=str(tmp_path))
    assert config.paths["libPath"] == str(tmp_path / "lib")
    assert config.paths["logPath"] == str(tmp_path / "var" / "bareun")
    assert config.paths["modelPath"] == str(tmp_path / "models")
    assert sorted(codes(config)) == [
        "not_a_file",
        "path_missing",
        "path_missing.modelPath",
        "undefined_variable",
    ]
    missing = only(config, "path_missing")
    assert missing.key == "logPath" and missing.line == 3 and missing.severity == "warning"
    assert missing.params["path"] == str(tmp_path / "var" / "bareun")
    assert only(config, "undefined_variable").params["variables"] == "${UNSET_VARIABLE}"


def test_missing_lib_path_is_an_error(tmp_path: Path) -> None:
    config = read('{"libPath": "${BAREUN_ROOT}/nolib"}', root=str(tmp_path))
    issue = only(config, "path_missing.libPath")
    assert issue.severity == "error" and (issue.line, issue.column) == (1, 2)


# --- no input makes the reader raise; positions are always inside the text ---------------------------


def _check_positions(text: str, config: BareunConfig) -> None:
    positions = TextPositions(text)
    for issue in config.issues:
        assert 1 <= issue.line <= positions.line_count
        assert 1 <= issue.column <= len(positions.line_text(issue.line)) + 2


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
KEYS = st.sampled_from(
    [
        "executionProvider",
        "provider",
        "tensorrtOptions",
        "libPath",
        "logPath",
        "modelPath",
        "licenseFile",
        "address",
        "port",
        "ipAddr",
        "version",
        "hasTestWeb",
        "deviceId",
        "maxWorkspaceSize",
        "other",
    ]
)
CONFIGS = st.dictionaries(
    KEYS,
    st.recursive(
        JSON_VALUES | st.sampled_from(["gpu", "cpu", "cuda", "CUDA", "${BAREUN_ROOT}/lib", "${X}"]),
        lambda children: st.dictionaries(KEYS, children, max_size=4),
        max_leaves=12,
    ),
    max_size=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_any_text_never_raises_and_positions_stay_inside(text: str) -> None:
    _check_positions(text, read(text))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_any_bytes_never_raise(data: bytes) -> None:
    read(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CONFIGS, st.sampled_from([None, 0, 2, "\t"]))
def test_generated_configs_point_at_their_keys(data: dict[str, object], indent: int | str | None) -> None:
    text = json.dumps(data, indent=indent)
    node = parse_with_positions(text)
    assert plain(node) == json.loads(text)
    config = read(text)
    _check_positions(text, config)
    lines = text.split("\n")
    for issue in config.issues:
        if issue.key and issue.code != "provider_not_set":
            last = issue.key.rsplit(".", 1)[-1]
            assert lines[issue.line - 1][issue.column - 1 :].startswith(json.dumps(last)), issue


@settings(max_examples=120, deadline=None)
@given(
    CONFIGS, st.integers(min_value=0, max_value=400), st.sampled_from(["", ",", "}", '"', "\\", "\x00", "/*"])
)
def test_damaged_configs_report_json_modules_position(data: dict[str, object], cut: int, junk: str) -> None:
    text = json.dumps(data, indent=2)
    damaged = text[:cut] + junk + text[cut:]
    expected = _json_error(damaged)
    if expected is None:
        read(damaged)
    else:
        issues = [issue for issue in read(damaged).issues if issue.code.startswith("malformed")]
        assert [(issue.line, issue.column) for issue in issues] == [expected]


def _json_error(text: str) -> tuple[int, int] | None:
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return error.lineno, error.colno
    return None
