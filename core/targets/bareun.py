"""The Bareun server profile: find the installation, read bareun.json with positions, read libPath.

Sources: ../shared/reference/bareun-facts.md. The root is BAREUN_ROOT (Linux .deb /opt/bareun,
Docker /bareun, Windows ``C:\\Program Files\\bareun``); the configuration is
``<root>/config/bareun.json`` (the server prints ``Use config file: …``); the only real sample
(3.x, third party) has ``libPath``, ``logPath``, ``modelPath``, ``licenseFile`` as ``${BAREUN_ROOT}/…``
and ``executionProvider`` as an object ``{"provider": "tensorrt"|"cuda"|"cpu", "tensorrtOptions": {…}}``;
the vendor's FAQ writes it as a string ``"gpu"``/``"cpu"``. Both forms are read. Keys this tool does
not know are fine: only known keys are checked (type, value, whether the path is there).

By hand: ``cat $BAREUN_ROOT/config/bareun.json | python -m json.tool`` and
``ls -l $BAREUN_ROOT/lib`` (is there a ``libonnxruntime_providers_cuda.so`` beside
``libonnxruntime.so.*``?).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fallback_doctor.core.collect.onnxruntime import PROVIDER_KEYS
from fallback_doctor.core.facts.onnxruntime import OrtFacts, ProviderLibrary
from fallback_doctor.core.facts.target import ConfigIssue, LibPathOrt, ProviderSetting
from fallback_doctor.core.frozen import probe_argv
from fallback_doctor.core.targets.jsonpos import (
    JsonPositionError,
    Member,
    Node,
    TextPositions,
    parse_with_positions,
)

CONFIG_RELATIVE = os.path.join("config", "bareun.json")
DEFAULT_ROOTS_POSIX: tuple[str, ...] = ("/opt/bareun", "/bareun")
DEFAULT_ROOTS_WINDOWS: tuple[str, ...] = ("C:\\Program Files\\bareun",)
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


def default_roots(platform: str = sys.platform) -> tuple[str, ...]:
    """Where a Bareun installation lives when BAREUN_ROOT is not set."""
    return DEFAULT_ROOTS_WINDOWS if platform.startswith("win") else DEFAULT_ROOTS_POSIX


def looks_like_bareun(root: str) -> bool:
    """True when ``root`` has config/bareun.json or the server binary (bin/bareun, bareun.exe)."""
    candidates = (
        os.path.join(root, CONFIG_RELATIVE),
        os.path.join(root, "bin", "bareun"),
        os.path.join(root, "bareun.exe"),
        os.path.join(root, "bin", "bareun.exe"),
    )
    return any(os.path.isfile(path) for path in candidates)


def find_root(env: Mapping[str, str], roots: Sequence[str] | None = None) -> tuple[str, str] | None:
    """The installation from BAREUN_ROOT, else the first default location that holds one.

    Returns (root, how it was found). By hand: ``echo $BAREUN_ROOT; ls /opt/bareun /bareun``.
    """
    from_env = env.get("BAREUN_ROOT")
    if from_env and os.path.isdir(from_env):
        return os.path.abspath(from_env), "BAREUN_ROOT"
    for root in default_roots() if roots is None else roots:
        if os.path.isdir(root) and looks_like_bareun(root):
            return root, "default location"
    return None


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


def read_config(path: str, env: Mapping[str, str], root: str | None) -> BareunConfig:
    """Read bareun.json: parse it with positions and check every key this tool knows.

    Never raises for the file's content: an unreadable, malformed or ill-typed file
    becomes ConfigIssues with line and column. By hand: ``python -m json.tool bareun.json``.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        config = BareunConfig(path=path)
        code = "config_missing" if isinstance(error, FileNotFoundError) else "unreadable"
        reason = str(error.strerror or error)
        config.issues.append(
            ConfigIssue(
                code, "error", None, 1, 1, f"{path}: {reason}", params={"file": path, "error": reason}
            )
        )
        return config
    return read_config_bytes(path, data[:MAX_CONFIG_BYTES], env, root)


def read_config_bytes(path: str, data: bytes, env: Mapping[str, str], root: str | None) -> BareunConfig:
    """The same as read_config, for bytes already read (tests, pasted text)."""
    issues: list[ConfigIssue] = []
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        issues.append(
            ConfigIssue(
                "bom",
                "warning",
                None,
                1,
                1,
                "the file starts with a UTF-8 byte order mark, which strict JSON readers refuse",
                params={"file": path},
            )
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as decode_error:
        bad = decode_error.start
        line = data.count(b"\n", 0, bad) + 1
        line_start = data.rfind(b"\n", 0, bad) + 1
        column = len(data[line_start:bad].decode("utf-8", errors="replace")) + 1
        text = data.decode("utf-8", errors="replace")
        byte = f"0x{data[bad]:02x}"
        issues.append(
            ConfigIssue(
                "not_utf8",
                "error",
                None,
                line,
                column,
                f"byte {byte} is not UTF-8 (saved in another encoding, e.g. CP949?)",
                line_text=_shorten(TextPositions(text).line_text(line), 300),
                params={"file": path, "line": str(line), "column": str(column), "byte": byte},
            )
        )
    reader = _Reader(path, text, env, root)
    reader.config.issues.extend(issues)
    reader.config.text = text
    try:
        node = parse_with_positions(text)
    except JsonPositionError as parse_error:
        error = parse_error
        message = _malformed_message(error, text)
        code = "malformed.backslash" if "backslash" in message else "malformed"
        reader.issue(code, "error", None, error.line, error.column, message, error=error.message)
        reader.config.key_lines = key_lines_by_text(text)
        return reader.config
    reader.read(node)
    try:
        reader.config.data = json.loads(text)
    except (ValueError, RecursionError):
        reader.config.data = None
    return reader.config


def key_lines_by_text(text: str) -> dict[str, int]:
    """Where the keys that matter are written in a text that is not valid JSON: the first line
    holding ``"key":``, a best guess for a malformed file. By hand: ``grep -n '"libPath"' bareun.json``."""
    found: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        for key in KEY_LINE_KEYS:
            if key not in found and re.search(rf'"{key}"\s*:', line):
                found[key] = number
    return found


def config_text_for_report(text: str | None) -> tuple[str | None, str | None]:
    """The text the report keeps (at most CONFIG_TEXT_LIMIT characters, cut at a line) and a note when cut."""
    if text is None or len(text) <= CONFIG_TEXT_LIMIT:
        return text, None
    cut = text.rfind("\n", 0, CONFIG_TEXT_LIMIT)
    kept = text[: cut + 1 if cut > 0 else CONFIG_TEXT_LIMIT]
    note = (
        f"the configuration is {len(text)} characters long; the report keeps its first {len(kept)} "
        f"({kept.count(chr(10))} lines)"
    )
    return kept, note


def _malformed_message(error: JsonPositionError, text: str) -> str:
    message = f"not valid JSON: {error.message}"
    segment = text[text.rfind('"', 0, error.offset) + 1 : error.offset]
    if error.message.startswith("Invalid \\escape") and re.match(r"[A-Za-z]:(?:$|[\\/])", segment):
        message += " (a Windows path needs each backslash written twice, or written as /)"
    return message


# --- libPath -------------------------------------------------------------------------------------

_CORE_LIBRARY = re.compile(
    r"^(?:libonnxruntime\.so(?:\.\d+)*|onnxruntime\.dll|libonnxruntime(?:\.\d+)*\.dylib)$", re.IGNORECASE
)
_PROVIDER_FILE = re.compile(r"^(?:lib)?onnxruntime_providers_(\w+?)\.(?:so|dll|dylib)$", re.IGNORECASE)
_PROVIDER_NAMES = PROVIDER_KEYS
"""libonnxruntime_providers_<key>.so -> provider: one table, kept with the Python-package reader."""
_VERSION_IN_NAME = re.compile(r"(?:\.so\.|^libonnxruntime\.)(\d+\.\d+\.\d+)")
_CUDA_LIB = re.compile(r"^(?:lib)?(?:cudart|cublas|cublaslt)(?:\.so\.|64_)(\d+)", re.IGNORECASE)
_CUDNN_LIB = re.compile(r"^(?:lib)?cudnn(?:\.so\.|64_)(\d+)", re.IGNORECASE)
_TRT_LIB = re.compile(r"^(?:lib)?nvinfer(?:\.so\.|_)(\d+)", re.IGNORECASE)


def version_from_name(name: str) -> str | None:
    """1.23.2 for libonnxruntime.so.1.23.2 or libonnxruntime.1.23.2.dylib; None for libonnxruntime.so.1."""
    match = _VERSION_IN_NAME.search(name)
    return match.group(1) if match else None


def _child_script() -> str:
    return str(Path(__file__).resolve().parent.parent / "probes" / "ort_version_child.py")


def read_library_version(
    path: str, env: Mapping[str, str], python: str = sys.executable, timeout_s: float = 15.0
) -> tuple[str | None, str | None]:
    """(version, None) from the library's own C API, or (None, why not), in a child process.

    By hand: ``python3 -c "import ctypes as c; l=c.CDLL('LIB'); ..."`` — see
    core/probes/ort_version_child.py for the three lines it takes.
    """
    from fallback_doctor.core.probes.runner import run_child

    if not _loadable_here(path):
        return None, "built for another operating system; read from the file name instead"
    child_env = dict(env)
    folder = os.path.dirname(path)
    variable = "PATH" if sys.platform == "win32" else "LD_LIBRARY_PATH"
    current = child_env.get(variable)
    child_env[variable] = folder + (os.pathsep + current if current else "")
    outcome = run_child(
        probe_argv(python, _child_script(), path, flags=("-I",)), env=child_env, timeout_s=timeout_s
    )
    for line in reversed(outcome.stdout.splitlines()):
        try:
            reply = json.loads(line)
        except ValueError:
            continue
        if isinstance(reply, dict):
            if isinstance(reply.get("version"), str) and reply["version"]:
                return str(reply["version"]), None
            if reply.get("error"):
                return None, str(reply["error"])
    return None, outcome.sentence("reading the ONNX Runtime version") + (
        f": {outcome.stderr.strip()[-300:]}" if outcome.stderr.strip() else ""
    )


def _loadable_here(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            magic = handle.read(4)
    except OSError:
        return False
    if sys.platform == "win32":
        return magic[:2] == b"MZ"
    if sys.platform == "darwin":
        return magic in (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")
    return magic == b"\x7fELF"


def inspect_lib_path(
    directory: str, env: Mapping[str, str], *, python: str = sys.executable, load: bool = True
) -> LibPathOrt:
    """Which ONNX Runtime libPath holds: the core library, its version, its provider libraries.

    The version comes from the library itself (its C API, in a child process) where it loads
    here, else from its file name. A folder without libonnxruntime_providers_cuda.so (or
    onnxruntime_providers_cuda.dll) holds a CPU-only package: it can never use the GPU.
    By hand: ``ls -l LIBPATH | grep onnxruntime``.
    """
    try:
        entries = sorted(os.listdir(directory))
    except OSError as list_error:
        return LibPathOrt(directory, None, None, None, (), (), load_error=str(list_error))
    cores = [name for name in entries if _CORE_LIBRARY.match(name)]
    core = _pick_core(directory, cores)
    providers: list[str] = []
    gpu: list[str] = []
    for name in entries:
        match = _PROVIDER_FILE.match(name)
        if not match:
            continue
        providers.append(os.path.join(directory, name))
        provider = _PROVIDER_NAMES.get(match.group(1).lower())
        if provider and provider not in gpu:
            gpu.append(provider)
    if any(name.lower() == "directml.dll" for name in entries):
        gpu.append("DmlExecutionProvider")
    version: str | None = None
    source: str | None = None
    error: str | None = None
    if core is not None:
        if load:
            version, error = read_library_version(core, env, python)
            source = "C API" if version else None
        if version is None:
            named = version_from_name(os.path.basename(os.path.realpath(core))) or next(
                (found for name in cores if (found := version_from_name(name))), None
            )
            if named:
                version, source = named, "file name"
    return LibPathOrt(
        directory=directory,
        core_library=core,
        version=version,
        version_source=source,
        provider_libraries=tuple(providers),
        gpu_providers=tuple(gpu),
        load_error=error,
    )


def _pick_core(directory: str, names: Iterable[str]) -> str | None:
    """The soname link where there is one (what the server opens), else the longest name."""
    listed = [name for name in names if os.path.exists(os.path.join(directory, name))]
    if not listed:
        return None
    listed.sort(
        key=lambda name: (name.count(".") != 2 if name.startswith("libonnxruntime.so") else False, -len(name))
    )
    return os.path.join(directory, listed[0])


def lib_path_ort_facts(lib: LibPathOrt) -> OrtFacts:
    """OrtFacts for the ONNX Runtime in libPath, so the library checks resolve its providers.

    The CUDA and cuDNN majors come from the CUDA provider's DT_NEEDED, else the bundled
    matrix for its version. By hand: ``readelf -d LIBPATH/libonnxruntime_providers_cuda.so | grep NEEDED``.
    """
    from fallback_doctor.core.collect.onnxruntime import PROVIDER_ORDER, read_needed
    from fallback_doctor.core.knowledge.ort_matrix import ort_requirements

    libraries: list[ProviderLibrary] = []
    shared: str | None = None
    for path in lib.provider_libraries:
        key = _PROVIDER_FILE.match(os.path.basename(path))
        name = key.group(1).lower() if key else ""
        if name == "shared":
            shared = path
            continue
        provider = _PROVIDER_NAMES.get(name)
        if provider is None:
            continue
        needed = (
            read_needed(path) if provider in ("CUDAExecutionProvider", "TensorrtExecutionProvider") else ()
        )
        libraries.append(ProviderLibrary(provider=provider, path=path, needed=needed))
    present = {item.provider for item in libraries} | set(lib.gpu_providers)
    providers = tuple(name for name in PROVIDER_ORDER if name == "CPUExecutionProvider" or name in present)
    matrix = ort_requirements(lib.version) if lib.version else None
    cuda_lib = next((item for item in libraries if item.provider == "CUDAExecutionProvider"), None)
    trt_lib = next((item for item in libraries if item.provider == "TensorrtExecutionProvider"), None)
    cuda_major = cudnn_major = trt_major = None
    sources: list[str] = []
    lazy: bool | None = None
    notes: list[str] = []
    if cuda_lib is not None:
        cuda_major, why = _major(
            cuda_lib, _CUDA_LIB, "CUDA", matrix.cuda_major if matrix else None, lib.version
        )
        sources.extend(why)
        cudnn_major, why = _major(
            cuda_lib, _CUDNN_LIB, "cuDNN", matrix.cudnn_major if matrix else None, lib.version
        )
        sources.extend(why)
        if cuda_lib.needed:
            lazy = not any(_CUDNN_LIB.match(name) for name in cuda_lib.needed)
        elif matrix is not None:
            lazy = matrix.cudnn_loaded_lazily
        if shared is None:
            notes.append(
                f"{lib.directory} has the CUDA provider but not libonnxruntime_providers_shared, "
                "which every provider library loads"
            )
    if trt_lib is not None:
        trt_major, _why = _major(
            trt_lib, _TRT_LIB, "TensorRT", matrix.tensorrt_major if matrix else None, lib.version
        )
    if lib.version is None and lib.core_library is not None:
        notes.append(
            f"the version of {os.path.basename(lib.core_library)} could not be read: {lib.load_error}"
        )
    return OrtFacts(
        distributions=(),
        package_dir=lib.directory,
        version=lib.version,
        cuda_build_version=None,
        providers_in_build=providers,
        provider_libraries=tuple(libraries),
        required_cuda_major=cuda_major,
        required_cudnn_major=cudnn_major,
        requirement_source="; ".join(sources) or None,
        version_source=lib.version_source,
        build_package_name=None,
        required_tensorrt_major=trt_major,
        cudnn_loaded_lazily=lazy,
        shared_library=shared,
        notes=tuple(notes),
    )


def _major(
    library: ProviderLibrary, pattern: re.Pattern[str], what: str, fallback: int | None, version: str | None
) -> tuple[int | None, list[str]]:
    for name in library.needed:
        match = pattern.match(name)
        if match:
            digits = match.group(1)
            major = int(digits[:2]) if len(digits) == 3 and digits.endswith("0") else int(digits)
            return major, [f"{what} {major}: {os.path.basename(library.path)} needs {name}"]
    if fallback is not None:
        return fallback, [f"{what} {fallback}: bundled matrix, ONNX Runtime {version}"]
    return None, []


# --- log files -----------------------------------------------------------------------------------


_ROTATED = re.compile(r"^(?P<base>.+?)(?:[.-]\d+(?:\.gz)?|\.gz)$")


def log_files(directory: str, limit: int = 4) -> tuple[str, ...]:
    """The current log files in the log directory, newest first, at most ``limit``.

    Rotations (``bareun.log.1``, ``bareun.log.2.gz``) of a file that is there are left out:
    the log reader takes them itself when the current file holds no start-up.
    By hand: ``ls -lt $BAREUN_ROOT/var/logs``.
    """
    try:
        with os.scandir(directory) as scan:
            files = {entry.name: (entry.stat().st_mtime, entry.path) for entry in scan if entry.is_file()}
    except OSError:
        return ()
    current = []
    for name, (mtime, path) in files.items():
        match = _ROTATED.match(name)
        if match and match.group("base") in files:
            continue
        current.append((mtime, path))
    current.sort(key=lambda item: (-item[0], item[1]))
    return tuple(path for _mtime, path in current[:limit])


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


def _bounds(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f"between {minimum} and {maximum}"
    if minimum is not None:
        return f"{minimum} or more"
    return f"{maximum} or less"
