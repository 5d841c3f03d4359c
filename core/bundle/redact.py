"""Redaction: secrets become ``[REDACTED]``, identities become consistent pseudonyms.

A step of its own (as in sos): :class:`Redactor` finds what must not leave the site in a text
and returns the new text with every redaction's span and kind, so a preview can show each one
before anything is written.

What is found
- Secrets: values of keys that look like secrets (password, token, secret, key, license,
  apikey, auth, credential …) in ``key=value``, ``key: value``, ``"key": "value"``, XML and
  ``--flag value`` forms; Bareun API keys (``koba-…``); bearer and basic tokens; private keys
  (PEM blocks, also a block cut in half); credentials in URLs; well-known token shapes.
- Identities, as consistent pseudonyms: user names (home directories in paths, ``USER=``),
  host names (this machine's, ``host=`` values, internal URL hosts), IPv4/IPv6 and MAC
  addresses, GPU and other UUIDs, serial numbers, e-mail addresses. Once a value is known it is
  replaced wherever it appears, in every member.
- Hidden forms: every detector also runs on a decoded view of the text in which JSON escapes
  (``\\/``, ``\\u0061``) and URL encoding (``%40``, ``%2F``) are undone, up to three levels
  deep; spans map back to the raw text, covering whole escape sequences. (UTF-16 and gzip are
  undone before the text gets here: see :mod:`content`.)
- Extra literal strings the technician asks to mask ("redact more").

By hand, a rough equivalent: ``grep -nE 'password|token|koba-|BEGIN .*PRIVATE KEY' FILE``.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fallback_doctor.core.bundle.pseudonyms import Pseudonyms, is_pseudonym

MARKER = "[REDACTED]"

SECRET = "secret"
IDENTITY = "identity"
EXTRA = "extra"
_PRIORITY = {SECRET: 3, EXTRA: 2, IDENTITY: 1}


@dataclass(frozen=True)
class Redaction:
    """One replaced span of the original text: what kind, where, with what, and a masked preview."""

    kind: str
    """"password", "bareun-api-key", "private-key", "user", "host", "ip", "gpu-uuid", "extra" …"""
    category: str
    """"secret", "identity" or "extra"."""
    start: int
    end: int
    """The span in the original text (``text[start:end]`` was replaced)."""
    replacement: str
    preview: str
    """The original, masked ("ko…(41 chars)", "a…"), for people to recognise it."""
    where: str = ""
    """For a JSON member: the JSON path of the value ("environment.python.executable")."""


@dataclass(frozen=True)
class RedactedText:
    """The redacted text and what was replaced (spans refer to the original)."""

    text: str
    redactions: tuple[Redaction, ...]


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    kind: str
    category: str
    replacement: str


# --------------------------------------------------------------------------------------------
# Decoded views: JSON escapes and URL encoding undone, with a map back to the raw text.


@dataclass(frozen=True)
class _View:
    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    """Decoded character i came from raw[starts[i]:ends[i]]."""

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        if end <= start:
            position = self.starts[start] if start < len(self.starts) else (self.ends[-1] if self.ends else 0)
            return position, position
        return self.starts[start], self.ends[end - 1]


_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|\\u[0-9a-fA-F]{4}"
    r"|\\[\"\\/bfnrt]"
    r"|(?:%[0-9A-Fa-f]{2})+"
)
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _decode_once(text: str) -> _View | None:
    """One level of JSON-escape and percent decoding; None when there is nothing to decode."""
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    found = False
    for match in _ESCAPE.finditer(text):
        found = True
        pieces.append(text[position : match.start()])
        starts.extend(range(position, match.start()))
        ends.extend(range(position + 1, match.start() + 1))
        token = match.group(0)
        begin = match.start()
        if token.startswith("\\u") and len(token) == 12:
            high, low = int(token[2:6], 16), int(token[8:12], 16)
            pieces.append(chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)))
            starts.append(begin)
            ends.append(match.end())
        elif token.startswith("\\u"):
            pieces.append(chr(int(token[2:6], 16)))
            starts.append(begin)
            ends.append(match.end())
        elif token.startswith("\\"):
            pieces.append(_SIMPLE_ESCAPES[token[1]])
            starts.append(begin)
            ends.append(match.end())
        else:
            data = bytes.fromhex(token.replace("%", ""))
            try:
                decoded = data.decode("utf-8")
            except UnicodeDecodeError:
                decoded = ""
            if decoded:
                offset = begin
                for char in decoded:
                    width = 3 * len(char.encode("utf-8"))
                    pieces.append(char)
                    starts.append(offset)
                    ends.append(offset + width)
                    offset += width
            else:
                for number, byte in enumerate(data):
                    pieces.append(chr(byte))
                    starts.append(begin + 3 * number)
                    ends.append(begin + 3 * number + 3)
        position = match.end()
    if not found:
        return None
    pieces.append(text[position:])
    starts.extend(range(position, len(text)))
    ends.extend(range(position + 1, len(text) + 1))
    return _View("".join(pieces), tuple(starts), tuple(ends))


def _escaped_lines(text: str) -> _View | None:
    """Only the lines that hold an escape sequence (the others decode to themselves), mapped to raw."""
    spans: list[tuple[int, int]] = []
    for match in _ESCAPE.finditer(text):
        if spans and match.start() < spans[-1][1]:
            continue
        begin = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        spans.append((begin, len(text) if end < 0 else end))
    if not spans:
        return None
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for begin, end in spans:
        if pieces:
            pieces.append("\n")
            starts.append(begin - 1 if begin > 0 else begin)
            ends.append(begin)
        pieces.append(text[begin:end])
        starts.extend(range(begin, end))
        ends.extend(range(begin + 1, end + 1))
    return _View("".join(pieces), tuple(starts), tuple(ends))


def _decoded_views(text: str, depth: int = 3) -> list[_View]:
    """Views of ``text`` with one, two, three levels of escaping undone (each mapped to raw)."""
    views: list[_View] = []
    base = _escaped_lines(text)
    if base is None:
        return views
    current_text = base.text
    current_starts: tuple[int, ...] | None = base.starts
    current_ends: tuple[int, ...] | None = base.ends
    for _ in range(depth):
        view = _decode_once(current_text)
        if view is None or view.text == current_text:
            break
        if current_starts is not None and current_ends is not None:
            starts = tuple(current_starts[s] for s in view.starts)
            ends = tuple(current_ends[e - 1] for e in view.ends)
            view = _View(view.text, starts, ends)
        views.append(view)
        current_text, current_starts, current_ends = view.text, view.starts, view.ends
    return views


# --------------------------------------------------------------------------------------------
# Detectors. Each yields (start, end, kind, category, value) on one text; the value is what
# gets a pseudonym (identities) or None (secrets: replaced by MARKER).

_SECRET_WORDS = re.compile(
    r"pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|(?<![a-z])key(?![a-z])|[a-z]key(?![a-z])"
    r"|(?<![a-z])key[_-]|licen[cs]e|auth|credential|cookie|session[_-]?id|signature|private",
    re.IGNORECASE,
)
_NOT_SECRET_KEYS = re.compile(
    r"tokeni[sz]er|keyboard|keyword|author|keys?_?(?:count|len|size)|max_?tokens?|num_?tokens?|monkey|hotkey",
    re.IGNORECASE,
)
_COUNT_LIKE = re.compile(r"(?:count|size|len(?:gth)?|max|min|_ms|_s|limit|num|total)$", re.IGNORECASE)
_SERIAL_KEY = re.compile(r"serial(?:[ _-]?(?:number|no|num))?$", re.IGNORECASE)
_HOST_KEY = re.compile(r"^(?:host(?:_?name)?|server(?:_?name)?|node(?:_?name)?|fqdn|machine_?name)$", re.I)
_USER_KEY = re.compile(r"^(?:user(?:_?name)?|login|owner|logname|sudo_user)$", re.IGNORECASE)
_UUID_KEY = re.compile(r"uuid$", re.IGNORECASE)


def is_secret_key(name: str) -> bool:
    """Whether a key, variable or label name looks like it holds a secret (password, token, …)."""
    lowered = name.lower()
    if _NOT_SECRET_KEYS.search(lowered):
        return False
    return _SECRET_WORDS.search(lowered) is not None


_NOT_A_VALUE = {"", "null", "none", "true", "false", "~", MARKER.lower(), "''", '""', "<redacted>", "***"}

_KEY = r"(?<![\w.\-])[A-Za-z_][\w.\-]{0,80}"
_KV_QUOTED = re.compile(
    rf"""(?P<kq>["']?)(?P<key>{_KEY})(?P=kq)\s*(?:=|:|=>)\s*(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>[^'\n]*)')"""
)
_KV_LINE = re.compile(
    rf"""^[ \t]*(?:export[ \t]+|set[ \t]+)?(?P<key>{_KEY})[ \t]*(?:=|:)[ \t]*"""
    r"""(?P<val>[^\s"'#;][^\n]*?)[ \t]*(?:[#;].*)?$""",
    re.MULTILINE,
)
_KV_INLINE = re.compile(rf"""(?P<key>{_KEY})\s*(?:=|:)\s*(?P<val>[^\s"'<>,;&\\)\]}}]+)""")
_FLAG = re.compile(
    r"""(?<![\w-])--?(?P<key>[A-Za-z][\w-]{0,60})(?:=|[ \t]+)"""
    r"""(?P<val>"[^"\n]*"|'[^'\n]*'|[^\s"'-][^\s"']*)"""
)
_XML = re.compile(r"<(?P<key>[A-Za-z_][\w.\-]*)(?:\s[^>]*)?>(?P<val>[^<\n]+)</(?P=key)>")
_PEM = re.compile(
    r"-----BEGIN (?P<label>[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----(?P<body>.*?)"
    r"(?:-----END (?P=label)-----|\Z)",
    re.DOTALL,
)
_PEM_ORPHAN_END = re.compile(
    r"\A(?P<body>(?:[^\n]*\n)*?)-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
)
_BEARER = re.compile(r"(?i)\b(?:bearer|basic|digest|negotiate)\s+(?P<val>[A-Za-z0-9\-._~+/]{6,}=*)")
_BAREUN = re.compile(r"\bkoba-[A-Za-z0-9]{4,}(?:-[A-Za-z0-9]+)*")
_TOKEN_SHAPES = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|xox[abprs]-[\w-]{10,}"
    r"|sk-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{20,}|glpat-[\w-]{20,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
)
_URL_USERINFO = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{1,15}://(?P<val>[^\s/@\"'<>]+)@")
_URL_HOST = re.compile(
    r"(?i)\b[a-z][a-z0-9+.\-]{1,15}://(?:[^\s/@\"'<>]+@)?(?P<host>[A-Za-z0-9][A-Za-z0-9.\-]*)"
)
_INTERNAL_TLD = re.compile(r"(?i)\.(?:local|lan|internal|intranet|corp|home|localdomain|private|intra)$")
_HOME = re.compile(
    r"(?:/home|/Users|/var/home|/export/home|/usr/home)/(?P<user>[^/\s\"'\\:;,()<>\[\]{}|*?]+)"
    r"|(?i:[A-Z]:(?:\\\\|\\|/)(?:Users|Documents and Settings)(?:\\\\|\\|/))(?P<wuser>[^\\/\s\"':;,()<>|*?]+)"
)
_NOT_USERS = {
    "public",
    "default",
    "all users",
    "default user",
    "shared",
    "root",
    "user",
    "users",
    "admin",
    "me",
}
_USER_VAR = re.compile(r"\b(?:USER|LOGNAME|USERNAME|SUDO_USER)\s*[=:]\s*\"?(?P<user>[A-Za-z_][\w.\-]*)")
_PROMPT = re.compile(
    r"(?<![\w.@-])(?P<user>[a-z_][a-z0-9_-]{1,31})@(?P<host>[A-Za-z][A-Za-z0-9-]{0,62})(?=:[~/])"
)
_HOST_VAR = re.compile(
    r"(?im)\b(?:host_?name|server_?name|node_?name|fqdn)[\"']?\s*[=:]\s*[\"']?(?P<host>[A-Za-z0-9][A-Za-z0-9.\-]*)"
    r"|^[ \t]*[\"']?(?:host|server|node|[a-z]+_host)[\"']?[ \t]*[=:][ \t]*[\"']?"
    r"(?P<host2>[A-Za-z0-9][A-Za-z0-9.\-]*)"
    r"|\b(?:host|server)=(?P<host3>[A-Za-z0-9][A-Za-z0-9.\-]*)"
)
_EMAIL = re.compile(r"(?<![\w.+\-:/%])[\w.+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+")
_IPV4 = re.compile(
    r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w]|\.\d)"
)
_VERSION_CONTEXT = re.compile(
    r"(?i)(?:version|ver\b|tensorrt|nvinfer|trt|cuda|cudnn|driver|onnx|runtime|\bv|release|build)[\s:=\"'_-]*$"
)
_IPV6 = re.compile(
    r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?:%[\w.]+)?(?![\w:])"
)
_MAC = re.compile(r"(?<![\w:-])[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}(?![\w:-])")
_GPU_UUID = re.compile(
    r"\b(?:MIG-)?(?:GPU-)[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
    r"|\bMIG-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
_UUID = re.compile(
    r"(?<![\w-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![\w-])"
)
_SERIAL = re.compile(
    r"(?i)\bserial(?:[ _-]?(?:number|no|num))?\s*[=:]\s*[\"']?(?P<val>[A-Za-z0-9][A-Za-z0-9\-]{3,})"
)
_NOT_HOSTS = {
    "localhost",
    "localhost.localdomain",
    "ip6-localhost",
    "0.0.0.0",
    "none",
    "null",
    "true",
    "false",
}

Raw = tuple[int, int, str, str, str | None]
"""(start, end, kind, category, value-for-pseudonym or None for a secret)."""


def _secret_value_hits(text: str) -> Iterable[Raw]:
    for match in _KV_QUOTED.finditer(text):
        key = match.group("key")
        group = "dq" if match.group("dq") is not None else "sq"
        value = match.group(group)
        if _SERIAL_KEY.search(key) and value:
            yield match.start(group), match.end(group), "serial", IDENTITY, value
        elif is_secret_key(key) and value.strip().lower() not in _NOT_A_VALUE:
            yield match.start(group), match.end(group), _kind_of_key(key), SECRET, None
    for pattern in (_KV_LINE, _KV_INLINE, _FLAG, _XML):
        yield from _key_value_hits(pattern, text, 0)


def _key_value_hits(pattern: re.Pattern[str], text: str, offset: int, depth: int = 0) -> Iterable[Raw]:
    """Secret values after secret-looking keys; a harmless key's value is searched again.

    ``error: password=hunter2`` matches first as the key ``error`` with the value
    ``password=hunter2``: the secret sits inside that value, so it is scanned in turn.
    """
    for match in pattern.finditer(text):
        key = match.group("key")
        value = match.group("val")
        if not is_secret_key(key) or _SERIAL_KEY.search(key):
            if depth < 4 and ("=" in value or ":" in value):
                yield from _key_value_hits(_KV_INLINE, value, offset + match.start("val"), depth + 1)
            continue
        start, end = match.start("val"), match.end("val")
        if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2:
            start, end, value = start + 1, end - 1, value[1:-1]
        if value.strip().lower() in _NOT_A_VALUE or value.startswith(("{", "[")):
            continue
        yield offset + start, offset + end, _kind_of_key(key), SECRET, None


def _kind_of_key(key: str) -> str:
    lowered = key.lower()
    for word, kind in (
        ("pass", "password"),
        ("pwd", "password"),
        ("licen", "license"),
        ("token", "token"),
        ("secret", "secret"),
        ("credential", "credential"),
        ("auth", "auth"),
        ("cookie", "cookie"),
        ("session", "session"),
        ("private", "private-key"),
        ("key", "key"),
    ):
        if word in lowered:
            return kind
    return "secret"


def _pattern_secret_hits(text: str) -> Iterable[Raw]:
    for match in _PEM.finditer(text):
        if match.group("body").strip():
            yield match.start("body"), match.end("body"), "private-key", SECRET, None
    orphan = _PEM_ORPHAN_END.search(text)
    if orphan and "-----BEGIN" not in orphan.group(0) and orphan.group("body").strip():
        yield orphan.start("body"), orphan.end("body"), "private-key", SECRET, None
    for match in _BEARER.finditer(text):
        yield match.start("val"), match.end("val"), "bearer-token", SECRET, None
    for match in _BAREUN.finditer(text):
        yield match.start(), match.end(), "bareun-api-key", SECRET, None
    for match in _TOKEN_SHAPES.finditer(text):
        yield match.start(), match.end(), "token", SECRET, None
    for match in _URL_USERINFO.finditer(text):
        yield match.start("val"), match.end("val"), "url-credentials", SECRET, None


def _identity_hits(text: str, skip_ipv4: bool = False) -> Iterable[Raw]:
    for match in _HOME.finditer(text):
        group = "user" if match.group("user") is not None else "wuser"
        user = match.group(group)
        if user.lower() not in _NOT_USERS and not is_pseudonym(user):
            yield match.start(group), match.end(group), "user", IDENTITY, user
    for match in _USER_VAR.finditer(text):
        user = match.group("user")
        if user.lower() not in _NOT_USERS and not is_pseudonym(user):
            yield match.start("user"), match.end("user"), "user", IDENTITY, user
    for match in _PROMPT.finditer(text):
        user, host = match.group("user"), match.group("host")
        if user.lower() not in _NOT_USERS and not is_pseudonym(user):
            yield match.start("user"), match.end("user"), "user", IDENTITY, user
        if not is_pseudonym(host) and host.lower() not in _NOT_HOSTS:
            yield match.start("host"), match.end("host"), "host", IDENTITY, host
    for match in _HOST_VAR.finditer(text):
        group = next(name for name in ("host", "host2", "host3") if match.group(name) is not None)
        host = match.group(group).rstrip(".-")
        if _host_worth_hiding(host):
            yield match.start(group), match.start(group) + len(host), "host", IDENTITY, host
    for match in _URL_HOST.finditer(text):
        host = match.group("host").rstrip(".-")
        if _host_worth_hiding(host) and ("." not in host or _INTERNAL_TLD.search(host)):
            yield match.start("host"), match.start("host") + len(host), "host", IDENTITY, host
    for match in _EMAIL.finditer(text):
        yield match.start(), match.end(), "email", IDENTITY, match.group(0)
    for match in _GPU_UUID.finditer(text):
        yield match.start(), match.end(), "gpu-uuid", IDENTITY, match.group(0)
    for match in _UUID.finditer(text):
        if text[max(0, match.start() - 4) : match.start()] not in ("GPU-", "MIG-"):
            yield match.start(), match.end(), "uuid", IDENTITY, match.group(0)
    for match in _MAC.finditer(text):
        value = match.group(0).lower().replace("-", ":")
        if value not in ("00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff"):
            yield match.start(), match.end(), "mac", IDENTITY, match.group(0)
    if not skip_ipv4:
        for match in _IPV4.finditer(text):
            line_start = text.rfind("\n", 0, match.start()) + 1
            before = text[max(line_start, match.start() - 32) : match.start()]
            if _VERSION_CONTEXT.search(before):
                continue
            if _ip_worth_hiding(match.group(0)):
                yield match.start(), match.end(), "ip", IDENTITY, match.group(0)
    for match in _IPV6.finditer(text):
        candidate = match.group(0)
        if candidate.count(":") < 2 or _MAC.fullmatch(candidate):
            continue
        if _ip_worth_hiding(candidate):
            yield match.start(), match.end(), "ip", IDENTITY, candidate
    for match in _SERIAL.finditer(text):
        value = match.group("val")
        if not is_pseudonym(value) and value.lower() not in _NOT_A_VALUE:
            yield match.start("val"), match.end("val"), "serial", IDENTITY, value


def _host_worth_hiding(host: str) -> bool:
    if not host or is_pseudonym(host) or host.lower() in _NOT_HOSTS:
        return False
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return not host.replace(".", "").isdigit()
    return False


def _ip_worth_hiding(value: str) -> bool:
    if ":" not in value:
        return not value.startswith(("127.", "0.")) and value != "255.255.255.255"
    try:
        address = ipaddress.ip_address(value.split("%", 1)[0])
    except ValueError:
        return False
    return not (address.is_loopback or address.is_unspecified or str(address) in ("255.255.255.255",))


# --------------------------------------------------------------------------------------------


def local_identity() -> tuple[list[str], list[str]]:
    """This machine's user name(s) and host name(s), read locally (no DNS): `whoami`, `hostname`."""
    import getpass
    import os

    users: list[str] = []
    try:
        users.append(getpass.getuser())
    except (KeyError, OSError):
        pass
    home = os.path.expanduser("~")
    if home and home not in ("~", "/root", "/"):
        users.append(os.path.basename(home.rstrip("/\\")))
    hosts: list[str] = []
    try:
        name = socket.gethostname()
    except OSError:
        name = ""
    if name:
        hosts.append(name)
        if "." in name:
            hosts.append(name.split(".", 1)[0])
    return users, hosts


class Redactor:
    """Finds secrets and identities in texts and JSON values; one instance per bundle.

    Pseudonyms are shared by everything one Redactor redacts, so the same host is host-1 in
    every member. Call :meth:`learn` on every text first so a value seen in one member is also
    replaced where it appears bare in another.
    """

    def __init__(
        self,
        pseudonyms: Pseudonyms | None = None,
        *,
        extra_literals: Iterable[str] = (),
        users: Iterable[str] = (),
        hosts: Iterable[str] = (),
        use_local_identity: bool = True,
    ) -> None:
        """``extra_literals``: strings to mask wherever they appear ("redact more"); ``users`` and
        ``hosts``: identities known beforehand (this machine's are added unless told not to)."""
        self.pseudonyms = pseudonyms if pseudonyms is not None else Pseudonyms()
        self.extra_literals = tuple(sorted({s for s in extra_literals if s.strip()}, key=len, reverse=True))
        self._known: dict[str, set[str]] = {"user": set(), "host": set()}
        local_users, local_hosts = local_identity() if use_local_identity else ([], [])
        for user in (*users, *local_users):
            self._remember("user", user)
        for host in (*hosts, *local_hosts):
            self._remember("host", host)
        self._literal_cache: tuple[int, re.Pattern[str] | None, re.Pattern[str] | None] = (-1, None, None)

    # -- learning --------------------------------------------------------------------------

    def _remember(self, kind: str, value: str) -> None:
        if kind == "user" and (len(value) < 3 or value.lower() in _NOT_USERS or is_pseudonym(value)):
            return
        if kind == "host" and (len(value) < 3 or not _host_worth_hiding(value)):
            return
        self._known.setdefault(kind, set()).add(value)
        self.pseudonyms.get(kind, value)

    def learn(self, text: str) -> None:
        """Note the identities in ``text`` (so they are replaced in every member, not only here)."""
        for view_text in [text, *(view.text for view in _decoded_views(text))]:
            self._learn_from(_identity_hits(view_text))

    def _learn_from(self, found: Iterable[Raw]) -> None:
        for _start, _end, kind, category, value in found:
            if category == IDENTITY and value is not None:
                self.pseudonyms.get(kind, value)
                if kind in ("user", "host"):
                    self._remember(kind, value)
                elif kind == "email":
                    self._remember("user", value.split("@", 1)[0])

    def learn_json(self, value: Any, key: str | None = None) -> None:
        """:meth:`learn` on every string (and key) inside a JSON value, and on values named by their key."""
        if isinstance(value, dict):
            for item_key, item in value.items():
                self.learn(str(item_key))
                self.learn_json(item, str(item_key))
        elif isinstance(value, list):
            for item in value:
                self.learn_json(item, key)
        elif isinstance(value, str):
            self.learn(value)
            stripped = value.strip()
            if key is not None and stripped and " " not in stripped:
                if _HOST_KEY.match(key):
                    self._remember("host", stripped)
                elif _USER_KEY.match(key):
                    self._remember("user", stripped)

    # -- redacting -------------------------------------------------------------------------

    def _literal_patterns(self) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
        known_users = {
            v for v in self.pseudonyms.known("user") if len(v) >= 3 and v.lower() not in _NOT_USERS
        }
        known_users |= self._known.get("user", set())
        known_hosts = {h for h in self.pseudonyms.known("host") if len(h) >= 3} | self._known.get(
            "host", set()
        )
        others: set[str] = set()
        for kind in ("serial", "email"):
            others.update(v for v in self.pseudonyms.known(kind) if len(v) >= 4)
        stamp = hash((frozenset(known_users), frozenset(known_hosts), frozenset(others)))
        if self._literal_cache[0] == stamp:
            return self._literal_cache[1], self._literal_cache[2]
        sensitive = sorted(known_users, key=len, reverse=True)
        insensitive = sorted(known_hosts | others, key=len, reverse=True)
        edge_l, edge_r = r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])"
        user_re = (
            re.compile(edge_l + "(?:" + "|".join(map(re.escape, sensitive)) + ")" + edge_r)
            if sensitive
            else None
        )
        other_re = (
            re.compile(edge_l + "(?:" + "|".join(map(re.escape, insensitive)) + ")" + edge_r, re.IGNORECASE)
            if insensitive
            else None
        )
        self._literal_cache = (stamp, user_re, other_re)
        return user_re, other_re

    def _literal_hits(self, text: str) -> Iterable[Raw]:
        user_re, other_re = self._literal_patterns()
        if user_re is not None:
            for match in user_re.finditer(text):
                yield match.start(), match.end(), "user", IDENTITY, match.group(0)
        if other_re is not None:
            for match in other_re.finditer(text):
                kind = self._kind_of_known(match.group(0))
                yield match.start(), match.end(), kind, IDENTITY, match.group(0)
        lowered = text.lower()
        for literal in self.extra_literals:
            needle = literal.lower()
            start = lowered.find(needle)
            while start >= 0:
                yield start, start + len(literal), "extra", EXTRA, None
                start = lowered.find(needle, start + 1)

    def _kind_of_known(self, value: str) -> str:
        lowered = value.lower()
        for kind in ("host", "ip", "mac", "gpu-uuid", "uuid", "serial", "email", "user"):
            if any(known.lower() == lowered for known in self.pseudonyms.known(kind)):
                return kind
        return "host"

    def _hits(self, text: str, skip_ipv4: bool) -> list[_Hit]:
        raw_hits: list[tuple[int, int, Raw]] = []
        views = _decoded_views(text)
        texts = [text, *(view.text for view in views)]
        detected: list[list[Raw]] = []
        for view_text in texts:
            found: list[Raw] = [
                *_secret_value_hits(view_text),
                *_pattern_secret_hits(view_text),
                *_identity_hits(view_text, skip_ipv4),
            ]
            self._learn_from(found)
            detected.append(found)
        for view_index, view_text in enumerate(texts):
            # Known values (learned here or in other members) wherever they appear bare.
            for item in [*detected[view_index], *self._literal_hits(view_text)]:
                start, end = item[0], item[1]
                if view_index > 0:
                    start, end = views[view_index - 1].raw_span(start, end)
                if end > start:
                    raw_hits.append((start, end, item))
        hits: list[_Hit] = []
        for start, end, (_s, _e, kind, category, value) in raw_hits:
            if category == IDENTITY and value is not None:
                replacement = self.pseudonyms.get(kind, value)
                if kind in ("user", "host"):
                    self._remember(kind, value)
            else:
                replacement = MARKER
            if text[start:end] == replacement:
                continue
            hits.append(_Hit(start, end, kind, category, replacement))
        return _merge(hits, _escape_boundaries(text, views))

    def redact(self, text: str, *, key: str | None = None) -> RedactedText:
        """Redact ``text``; ``key`` is the name it was stored under, when known (a JSON key, a label)."""
        if key is not None:
            whole = self._whole_value(text, key)
            if whole is not None:
                return whole
        skip_ipv4 = key is not None and "version" in key.lower()
        hits = self._hits(text, skip_ipv4)
        pieces: list[str] = []
        position = 0
        redactions: list[Redaction] = []
        for hit in hits:
            pieces.append(text[position : hit.start])
            pieces.append(hit.replacement)
            redactions.append(
                Redaction(
                    hit.kind,
                    hit.category,
                    hit.start,
                    hit.end,
                    hit.replacement,
                    mask(text[hit.start : hit.end], hit.category),
                )
            )
            position = hit.end
        pieces.append(text[position:])
        return RedactedText("".join(pieces), tuple(redactions))

    def _whole_value(self, text: str, key: str) -> RedactedText | None:
        """A value stored under a telling key: all of it is the secret, the host, the user …"""
        stripped = text.strip()
        if not stripped or stripped.lower() in _NOT_A_VALUE or is_pseudonym(stripped):
            return None
        start = text.index(stripped)
        end = start + len(stripped)
        if _SERIAL_KEY.search(key):
            kind, category, replacement = "serial", IDENTITY, self.pseudonyms.get("serial", stripped)
        elif is_secret_key(key):
            kind, category, replacement = _kind_of_key(key), SECRET, MARKER
        elif _HOST_KEY.match(key) and _host_worth_hiding(stripped) and " " not in stripped:
            self._remember("host", stripped)
            kind, category, replacement = "host", IDENTITY, self.pseudonyms.get("host", stripped)
        elif _USER_KEY.match(key) and " " not in stripped and stripped.lower() not in _NOT_USERS:
            self._remember("user", stripped)
            kind, category, replacement = "user", IDENTITY, self.pseudonyms.get("user", stripped)
        elif _UUID_KEY.search(key) and _UUID.search(stripped) and " " not in stripped:
            kind = "gpu-uuid" if stripped.upper().startswith(("GPU-", "MIG-")) else "uuid"
            category, replacement = IDENTITY, self.pseudonyms.get(kind, stripped)
        else:
            return None
        redaction = Redaction(kind, category, start, end, replacement, mask(stripped, category))
        return RedactedText(text[:start] + replacement + text[end:], (redaction,))

    # -- JSON ------------------------------------------------------------------------------

    def redact_json(
        self, value: Any, *, key: str | None = None, path: str = ""
    ) -> tuple[Any, list[Redaction]]:
        """Redact every string (and key) of a JSON value; secret-named keys lose their values whole.

        Environment dictionaries (under "environment", "env", "environ") keep only allowlisted
        variables (CUDA_*, NVIDIA_*, ORT_*, LD_LIBRARY_PATH, PATH, LANG, LC_* …); the others are
        left out and counted. Returned redactions carry their JSON path in ``where``; their
        spans are within that string.
        """
        found: list[Redaction] = []
        result = self._walk(value, key, path, found)
        return result, found

    def _walk(self, value: Any, key: str | None, path: str, found: list[Redaction]) -> Any:
        if isinstance(value, dict):
            if key is not None and key.lower() in ("environment", "env", "environ") and _is_env(value):
                value = self._filter_environment(value, path, found)
            label = _label_of(value)
            out: dict[str, Any] = {}
            for item_key, item in value.items():
                child = f"{path}.{item_key}" if path else str(item_key)
                new_key = self._walk_string(str(item_key), None, child + "#key", found)
                context = label if (item_key == "value" and label is not None) else str(item_key)
                out[new_key] = self._walk(item, context, child, found)
            return out
        if isinstance(value, list):
            return [self._walk(item, key, f"{path}[{index}]", found) for index, item in enumerate(value)]
        if isinstance(value, str):
            return self._walk_string(value, key, path, found)
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and key is not None
            and (is_secret_key(key) or _SERIAL_KEY.search(key))
            and not _COUNT_LIKE.search(key)
        ):
            found.append(Redaction(_kind_of_key(key), SECRET, 0, 0, MARKER, mask(str(value), SECRET), path))
            return MARKER
        return value

    def _walk_string(self, text: str, key: str | None, path: str, found: list[Redaction]) -> str:
        result = self.redact(text, key=key)
        for redaction in result.redactions:
            found.append(
                Redaction(
                    redaction.kind,
                    redaction.category,
                    redaction.start,
                    redaction.end,
                    redaction.replacement,
                    redaction.preview,
                    path,
                )
            )
        return result.text

    def _filter_environment(
        self, env: Mapping[str, Any], path: str, found: list[Redaction]
    ) -> dict[str, Any]:
        allowed = allowed_environment_names(env)
        for name in env:
            if name not in allowed:
                where = f"{path}.{name}" if path else str(name)
                found.append(
                    Redaction("environment-variable", SECRET, 0, 0, "(left out)", f"{name}=…", where)
                )
        return {name: item for name, item in env.items() if name in allowed}


def allowed_environment_names(env: Mapping[str, Any]) -> set[str]:
    """The variable names that may leave the machine (the same allowlist the collectors use)."""
    from fallback_doctor.core.collect.run import relevant_environment

    return set(relevant_environment({str(name): "" for name in env}))


def _is_env(value: Mapping[str, Any]) -> bool:
    return all(isinstance(item, str) for item in value.values()) and all(
        re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(name)) for name in value
    )


def _label_of(value: Mapping[str, Any]) -> str | None:
    if "value" not in value:
        return None
    for field in ("label", "name", "key"):
        label = value.get(field)
        if isinstance(label, str):
            return label
    return None


def _escape_boundaries(text: str, views: list[_View]) -> Callable[[int, int], tuple[int, int]]:
    """Widen a raw span so it never cuts an escape sequence (``\\u0061``, ``%2F``) in two."""
    if not views:
        return lambda start, end: (start, end)
    begin_of: dict[int, int] = {}
    end_of: dict[int, int] = {}
    for match in _ESCAPE.finditer(text):
        step = 3 if match.group(0).startswith("%") else len(match.group(0))
        for unit in range(match.start(), match.end(), step):
            for inner in range(unit + 1, unit + step):
                begin_of[inner] = unit
                end_of[inner] = unit + step

    def widen(start: int, end: int) -> tuple[int, int]:
        return begin_of.get(start, start), end_of.get(end, end)

    return widen


def _merge(hits: list[_Hit], widen: Callable[[int, int], tuple[int, int]]) -> list[_Hit]:
    """Non-overlapping hits in order; where hits overlap, the union takes the stronger replacement."""
    widened = []
    for hit in hits:
        start, end = widen(hit.start, hit.end)
        widened.append(_Hit(start, end, hit.kind, hit.category, hit.replacement))
    widened.sort(key=lambda h: (h.start, -(h.end - h.start)))
    merged: list[_Hit] = []
    for hit in widened:
        if merged and hit.start < merged[-1].end:
            last = merged[-1]
            stronger = max(
                (last, hit), key=lambda h: (_PRIORITY[h.category], h.end - h.start, h.category == IDENTITY)
            )
            merged[-1] = _Hit(
                last.start, max(last.end, hit.end), stronger.kind, stronger.category, stronger.replacement
            )
        else:
            merged.append(hit)
    return merged


def mask(value: str, category: str) -> str:
    """A recognisable but harmless preview: "ko…(41 chars)" for a secret, "al…" for an identity."""
    value = value.replace("\n", " ")
    if category == IDENTITY:
        return (value[:2] + "…") if len(value) > 3 else "…"
    head = value[:2] if len(value) >= 10 else ""
    return f"{head}…({len(value)} chars)"


def redact_json_text(redactor: Redactor, text: str) -> RedactedText:
    """Redact JSON text structurally when it parses, as plain text otherwise."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return redactor.redact(text)
    redacted, found = redactor.redact_json(value)
    return RedactedText(json.dumps(redacted, ensure_ascii=False, indent=2), tuple(found))
