"""bareun.json checked key by key, with positions: the reader behind core/readers/targets/bareun_config.py.

Only known keys are checked (type, value, whether a path is there); each problem becomes a
:class:`ConfigIssue` with its line and column. Sources: ../shared/reference/bareun-facts.md.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from fallback_doctor.core.model.facts.target import ConfigIssue, ProviderSetting
from fallback_doctor.core.readers.targets.jsonpos import Member, Node, TextPositions

CONFIG_RELATIVE = os.path.join("config", "bareun.json")
MAX_CONFIG_BYTES = 4 * 1024 * 1024
"""A larger file is not a configuration; it is read no further than this."""
CONFIG_TEXT_LIMIT = 256 * 1024
"""The report keeps the configuration's text up to this many characters (a note says when cut)."""
KEY_LINE_KEYS: tuple[str, ...] = ("executionProvider", "libPath", "logPath", "modelPath", "licenseFile")
"""The keys whose lines the configuration page highlights."""

STRING_PROVIDERS = ("gpu", "cpu")
"""executionProvider as a string: the vendor FAQ's form."""
OBJECT_PROVIDERS = ("cuda", "tensorrt", "cpu")
"""executionProvider.provider values seen in a real configuration (bareun-facts.md A5, A7)."""
KNOWN_PROVIDERS = ("gpu", "cpu", "cuda", "tensorrt", "directml")
"""Every value accepted in either form; directml only from a third-party README (unverified)."""

PATH_KEYS: tuple[str, ...] = (
    "libPath",
    "logPath",
    "modelPath",
    "licenseFile",
    "tracePath",
    "customDictPath",
    "varPath",
    "manualPath",
    "webPath",
)
CHECKED_PATHS: dict[str, tuple[str, str]] = {
    "libPath": ("dir", "error"),
    "logPath": ("dir", "warning"),
    "modelPath": ("dir", "warning"),
    "licenseFile": ("file", "warning"),
}
"""Paths whose absence is a finding: kind expected, and how much it matters. The models are
downloaded at start-up and the licence is written at registration, so those only warn."""
BOOL_KEYS: tuple[str, ...] = ("libDevel", "hasTestWeb", "confusingServiceUseTls")
ADDRESS_KEYS: tuple[str, ...] = ("address", "staticAddress", "confusingService")

TRT_INT_MINIMUM: dict[str, int] = {
    "deviceId": 0,
    "maxPartitionIterations": 1,
    "minSubgraphSize": 1,
    "trtDlaCore": -1,
}
TRT_BOOL_KEYS: tuple[str, ...] = (
    "fp16Enable",
    "int8Enable",
    "trtEngineCacheEnable",
    "trtLayerNormFp32Fallback",
)
_WORKSPACE = re.compile(r"^\s*\d+(?:\.\d+)?\s*(?:[KMGT]i?B?|B)?\s*$", re.IGNORECASE)
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


# --- the configuration ---------------------------------------------------------------------------


@dataclass
class BareunConfig:
    """What bareun.json says, read with positions, and what is wrong in it."""

    path: str
    issues: list[ConfigIssue] = field(default_factory=list)
    provider: ProviderSetting | None = None
    paths: dict[str, str] = field(default_factory=dict)
    """Path settings after ${VAR} expansion, absolute (relative ones taken from the root)."""
    data: object = None
    """The configuration as plain data (None when it could not be parsed)."""
    text: str | None = None
    """The file's text as decoded (undecodable bytes replaced); None when it could not be read."""
    key_lines: dict[str, int] = field(default_factory=dict)
    """Where the keys that matter (KEY_LINE_KEYS) are written: key -> 1-based line."""


class _Reader:
    """Checks one parsed configuration; every issue carries the line and column of its key."""

    def __init__(self, path: str, text: str, env: Mapping[str, str], root: str | None) -> None:
        self.path = path
        self.positions = TextPositions(text)
        self.env = env
        self.root = root
        self.config = BareunConfig(path=path)

    def issue(
        self,
        code: str,
        severity: str,
        key: str | None,
        line: int,
        column: int,
        message: str,
        value: str | None = None,
        value_column: int | None = None,
        **params: object,
    ) -> None:
        fields = {name: str(item) for name, item in params.items()}
        fields.setdefault("file", self.path)
        fields.setdefault("line", str(line))
        fields.setdefault("column", str(column))
        if key is not None:
            fields.setdefault("key", key)
        if value is not None:
            fields.setdefault("value", value)
        self.config.issues.append(
            ConfigIssue(
                code=code,
                severity=severity,
                key=key,
                line=line,
                column=column,
                message=message,
                value=value,
                line_text=_shorten(self.positions.line_text(line), 300),
                params=fields,
                value_column=value_column,
            )
        )

    def at(self, code: str, severity: str, key: str, member: Member, message: str, **params: object) -> None:
        """An issue at the key (its line and column), quoting the value as written."""
        node = member.node
        value_column = node.column if node.line == member.line else None
        self.issue(
            code,
            severity,
            key,
            member.line,
            member.column,
            message,
            _raw(self.positions.text, node),
            value_column,
            **params,
        )

    def read(self, root_node: Node) -> None:
        if root_node.kind != "object":
            found = _raw(self.positions.text, root_node)
            self.issue(
                "not_object",
                "error",
                None,
                root_node.line,
                root_node.column,
                f"the configuration must be a JSON object ({{ … }}), found {_kind_words(root_node.kind)}",
                found,
                root_node.column,
                found=found,
            )
            return
        members: dict[str, Member] = root_node.value
        for key in KEY_LINE_KEYS:
            if key in members:
                self.config.key_lines[key] = members[key].line
        for key in root_node.duplicates:
            self.at(
                "duplicate_key",
                "warning",
                key,
                members[key],
                f"{key} is written more than once; the last one counts",
            )
        self._provider(members.get("executionProvider"), root_node)
        if "version" in members:
            self._integer("version", members["version"], minimum=0)
        for key in PATH_KEYS:
            if key in members:
                self._path(key, members[key])
        for key in BOOL_KEYS:
            if key in members:
                self._type(key, members[key], "bool")
        for key in ADDRESS_KEYS:
            if key in members:
                self._address(key, members[key])
        if "confusingServiceRemote" in members:
            self._type("confusingServiceRemote", members["confusingServiceRemote"], "string")
        self.config.issues.sort(key=lambda issue: (issue.line, issue.column))

    # - types -

    def _type(self, key: str, member: Member, wanted: str) -> bool:
        """True when the value has the wanted JSON kind; else a wrong_type.<wanted> issue."""
        if member.node.kind == wanted:
            return True
        words = _WANTED_WORDS[wanted]
        self.at(
            f"wrong_type.{wanted}",
            "error",
            key,
            member,
            f"{key} must be {words}, found {_kind_words(member.node.kind)}",
        )
        return False

    def _integer(
        self, key: str, member: Member, *, minimum: int | None = None, maximum: int | None = None
    ) -> None:
        value = member.node.value
        if member.node.kind != "number" or not isinstance(value, int) or isinstance(value, bool):
            self.at(
                "wrong_type.integer",
                "error",
                key,
                member,
                f"{key} must be an integer, found {_raw(self.positions.text, member.node)}",
            )
            return
        if minimum is not None and maximum is not None and not minimum <= value <= maximum:
            self.at(
                "bad_value.range",
                "error",
                key,
                member,
                f"{key} is {value}; it must be between {minimum} and {maximum}",
                minimum=minimum,
                maximum=maximum,
            )
        elif minimum is not None and value < minimum:
            self.at(
                "bad_value.minimum",
                "error",
                key,
                member,
                f"{key} is {value}; it must be {minimum} or more",
                minimum=minimum,
            )

    def _address(self, key: str, member: Member) -> None:
        if not self._type(key, member, "object"):
            return
        fields: dict[str, Member] = member.node.value
        if "port" in fields:
            self._integer(f"{key}.port", fields["port"], minimum=1, maximum=65535)
        if "ipAddr" in fields:
            self._type(f"{key}.ipAddr", fields["ipAddr"], "string")

    # - executionProvider -

    def _provider(self, member: Member | None, root_node: Node) -> None:
        if member is None:
            self.config.provider = ProviderSetting("absent", None, None, None, None)
            self.issue(
                "provider_not_set",
                "info",
                "executionProvider",
                root_node.line,
                root_node.column,
                "executionProvider is not set; which provider the server then uses is not published",
            )
            return
        node = member.node
        raw = _raw(self.positions.text, node)
        line_text = _shorten(self.positions.line_text(member.line), 300)
        if node.kind == "string":
            provider = self._provider_value("executionProvider", member, str(node.value))
            self.config.provider = ProviderSetting(
                "string", raw, provider, member.line, member.column, line_text
            )
            return
        if node.kind != "object":
            self.at(
                "wrong_type.provider",
                "error",
                "executionProvider",
                member,
                'executionProvider must be a string ("gpu", "cpu") or an object '
                f'({{"provider": "cuda"}}), found {_kind_words(node.kind)}',
            )
            self.config.provider = ProviderSetting(
                "invalid", raw, None, member.line, member.column, line_text
            )
            return
        fields: dict[str, Member] = node.value
        inner = fields.get("provider")
        if inner is None:
            self.at(
                "provider_missing",
                "error",
                "executionProvider",
                member,
                'executionProvider is an object without "provider"',
            )
        elif self._type("executionProvider.provider", inner, "string"):
            chosen = self._provider_value("executionProvider.provider", inner, str(inner.node.value))
            line_text = _shorten(self.positions.line_text(inner.line), 300)
            self.config.provider = ProviderSetting("object", raw, chosen, inner.line, inner.column, line_text)
        if self.config.provider is None:
            self.config.provider = ProviderSetting("object", raw, None, member.line, member.column, line_text)
        options = fields.get("tensorrtOptions")
        if options is not None:
            self._tensorrt_options(options)

    def _provider_value(self, key: str, member: Member, value: str) -> str | None:
        if value in KNOWN_PROVIDERS:
            return value
        lowered = value.strip().lower()
        known = ", ".join(f'"{item}"' for item in KNOWN_PROVIDERS)
        if lowered in KNOWN_PROVIDERS:
            self.at(
                "provider_case",
                "warning",
                key,
                member,
                f'"{value}" is written differently from every published value; write "{lowered}"',
                written=lowered,
            )
            return lowered
        close = difflib.get_close_matches(lowered, KNOWN_PROVIDERS, n=1, cutoff=0.6)
        shown = _shorten(value, 60)
        if close:
            self.at(
                "provider_unknown.suggest",
                "error",
                key,
                member,
                f'"{shown}" is not a known execution provider (known: {known}); did you mean "{close[0]}"?',
                known=known,
                suggestion=close[0],
            )
        else:
            self.at(
                "provider_unknown",
                "error",
                key,
                member,
                f'"{shown}" is not a known execution provider (known: {known})',
                known=known,
            )
        return None

    def _tensorrt_options(self, member: Member) -> None:
        key = "executionProvider.tensorrtOptions"
        if not self._type(key, member, "object"):
            return
        options: dict[str, Member] = member.node.value
        for name, minimum in TRT_INT_MINIMUM.items():
            if name in options:
                self._integer(f"{key}.{name}", options[name], minimum=minimum)
        for name in TRT_BOOL_KEYS:
            if name in options:
                self._type(f"{key}.{name}", options[name], "bool")
        if "trtEngineCachePath" in options:
            self._type(f"{key}.trtEngineCachePath", options["trtEngineCachePath"], "string")
        workspace = options.get("maxWorkspaceSize")
        if workspace is not None:
            node = workspace.node
            valid = (node.kind == "string" and _WORKSPACE.match(str(node.value))) or (
                node.kind == "number"
                and isinstance(node.value, int)
                and not isinstance(node.value, bool)
                and node.value > 0
            )
            if not valid:
                self.at(
                    "bad_value.workspace",
                    "error",
                    f"{key}.maxWorkspaceSize",
                    workspace,
                    'maxWorkspaceSize must be a size such as "4G" or a number of bytes',
                )

    # - paths -

    def _path(self, key: str, member: Member) -> None:
        if not self._type(key, member, "string"):
            return
        value = str(member.node.value)
        if not value.strip():
            self.at("bad_value.empty", "error", key, member, f"{key} is empty")
            return
        expanded, undefined = expand_variables(value, self.env, self.root)
        if undefined:
            names = ", ".join("${" + name + "}" for name in undefined)
            self.at(
                "undefined_variable",
                "warning",
                key,
                member,
                f"{names} in {key} is not set in the environment this tool sees",
                variables=names,
            )
            return
        if not os.path.isabs(expanded) and self.root:
            expanded = os.path.join(self.root, expanded)
        expanded = os.path.normpath(expanded)
        self.config.paths[key] = expanded
        wanted = CHECKED_PATHS.get(key)
        if wanted is None:
            return
        kind, severity = wanted
        if not os.path.exists(expanded):
            code = f"path_missing.{key}" if key in _OWN_MISSING_TEXT else "path_missing"
            self.at(
                code, severity, key, member, f"{key} names {expanded}, which does not exist", path=expanded
            )
        elif kind == "dir" and not os.path.isdir(expanded):
            self.at(
                "not_a_directory",
                severity,
                key,
                member,
                f"{key} names {expanded}, which is not a directory",
                path=expanded,
            )
        elif kind == "file" and not os.path.isfile(expanded):
            self.at(
                "not_a_file",
                severity,
                key,
                member,
                f"{key} names {expanded}, which is not a file",
                path=expanded,
            )


_OWN_MISSING_TEXT = ("libPath", "licenseFile", "modelPath")
_WANTED_WORDS = {
    "string": "a string",
    "bool": "true or false",
    "object": "an object",
    "integer": "an integer",
}


def expand_variables(value: str, env: Mapping[str, str], root: str | None) -> tuple[str, tuple[str, ...]]:
    """Expand ``${VAR}`` from ``env``; BAREUN_ROOT falls back to the installation found.

    Returns the expanded text and the names that are not set (left as written).
    """
    undefined: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in env:
            return env[name]
        if name == "BAREUN_ROOT" and root:
            return root
        if name not in undefined:
            undefined.append(name)
        return match.group(0)

    return _VARIABLE.sub(replace, value), tuple(undefined)


# --- helpers -------------------------------------------------------------------------------------


def _raw(text: str, node: Node) -> str:
    return _shorten(text[node.offset : node.end], 120)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind_words(kind: str) -> str:
    return {
        "object": "an object",
        "array": "an array",
        "string": "a string",
        "number": "a number",
        "bool": "true/false",
        "null": "null",
    }.get(kind, kind)
