"""Identity detectors: user and host names, addresses, UUIDs, serial numbers, e-mail addresses.

Each yields (start, end, kind, IDENTITY, value); the value gets a consistent pseudonym
(:mod:`pseudonyms`). Found: user names in home directories (``/home/NAME``, ``C:\\Users\\NAME``),
``USER=`` / ``user=`` values and shell prompts; host names after ``host=``, ``hostname:`` and in
internal URLs; IPv4 and IPv6 addresses (not version numbers), MAC addresses, GPU and other
UUIDs, serial numbers, e-mail addresses. By hand: ``grep -nE '/home/|@|([0-9]{1,3}\\.){3}' FILE``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from functools import lru_cache

from fallback_doctor.core.redaction.detect_keys import IDENTITY, NOT_A_VALUE, Raw
from fallback_doctor.core.redaction.pseudonyms import is_pseudonym
from fallback_doctor.core.redaction.scan import Detector, anchored_finditer, starts_finditer

NOT_USERS = frozenset(
    {"public", "default", "all users", "default user", "shared", "root", "user", "users", "admin", "me"}
)
NOT_HOSTS = frozenset(
    {"localhost", "localhost.localdomain", "ip6-localhost", "0.0.0.0", "none", "null", "true", "false"}
)

_UNIX_HOME = r"(?:/home|/Users|/var/home|/export/home|/usr/home)/(?P<user>[^/\s\"'\\:;,()<>\[\]{}|*?]+)"
_HOME = re.compile(
    _UNIX_HOME
    + r"|(?i:[A-Z]:(?:\\\\|\\|/)(?:Users|Documents and Settings)(?:\\\\|\\|/))"
    + r"(?P<wuser>[^\\/\s\"':;,()<>|*?]+)"
)
_HOME_UNIX = re.compile(_UNIX_HOME)
"""Only the Unix homes: it starts with "/", which the search skips to as fast as ``str.find``."""
_USER_VAR = re.compile(r"(?i)\b(?:USER|LOGNAME|USERNAME|SUDO_USER)\s*[=:]\s*\"?(?P<user>[A-Za-z_][\w.\-]*)")
_PROMPT = re.compile(
    r"(?<![\w.@-])(?P<user>[a-z_][a-z0-9_-]{1,31})@(?P<host>[A-Za-z][A-Za-z0-9-]{0,62})(?=:[~/])"
)
_HOST_VAR = re.compile(
    r"(?im)\b(?:host_?name|server_?name|node_?name|fqdn)[\"']?\s*[=:]\s*[\"']?(?P<host>[A-Za-z0-9][A-Za-z0-9.\-]*)"
    r"|^[ \t]*[\"']?(?:host|server|node|[a-z]+_host)[\"']?[ \t]*[=:][ \t]*[\"']?"
    r"(?P<host2>[A-Za-z0-9][A-Za-z0-9.\-]*)"
    r"|\b(?:host|server)=(?P<host3>[A-Za-z0-9][A-Za-z0-9.\-]*)"
)
_HOST_VAR_STARTS = ("host", "server", "node", "fqdn")
"""Where a match of _HOST_VAR can start, besides a line's start."""
_URL_HOST = re.compile(
    r"(?i)\b[a-z][a-z0-9+.\-]{1,15}://(?:[^\s/@\"'<>]+@)?(?P<host>[A-Za-z0-9][A-Za-z0-9.\-]*)"
)
_INTERNAL_TLD = re.compile(r"(?i)\.(?:local|lan|internal|intranet|corp|home|localdomain|private|intra)$")
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
MAC = re.compile(r"(?<![\w:-])[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}(?![\w:-])")
_GPU_UUID = re.compile(
    r"\b(?:MIG-)?(?:GPU-)[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
    r"|\bMIG-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
UUID = re.compile(
    r"(?<![\w-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![\w-])"
)
_SERIAL = re.compile(
    r"(?i)\bserial(?:[ _-]?(?:number|no|num))?\s*[=:]\s*[\"']?(?P<val>[A-Za-z0-9][A-Za-z0-9\-]{3,})"
)


@lru_cache(maxsize=8192)
def host_worth_hiding(host: str) -> bool:
    """Whether a host name is one to hide (not localhost, not an address, not already a pseudonym)."""
    if not host or is_pseudonym(host) or host.lower() in NOT_HOSTS:
        return False
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return not host.replace(".", "").isdigit()
    return False


@lru_cache(maxsize=8192)
def _ip_worth_hiding(value: str) -> bool:
    if ":" not in value:
        return not value.startswith(("127.", "0.")) and value != "255.255.255.255"
    try:
        address = ipaddress.ip_address(value.split("%", 1)[0])
    except ValueError:
        return False
    return not (address.is_loopback or address.is_unspecified or str(address) in ("255.255.255.255",))


def _user_ok(user: str) -> bool:
    return user.lower() not in NOT_USERS and not is_pseudonym(user)


def _unix_homes(text: str, start: int, end: int) -> Iterable[Raw]:
    """``/home/NAME`` and the like (a Windows home holds ``Users``: the next detector's)."""
    return _homes(text, start, end, _HOME_UNIX)


def _homes(text: str, start: int, end: int, pattern: re.Pattern[str] = _HOME) -> Iterable[Raw]:
    for match in pattern.finditer(text, start, end):
        group = "user" if match.group("user") is not None else "wuser"
        user = match.group(group)
        if _user_ok(user):
            yield match.start(group), match.end(group), "user", IDENTITY, user


def _user_vars(text: str, start: int, end: int) -> Iterable[Raw]:
    for match in _USER_VAR.finditer(text, start, end):
        user = match.group("user")
        if _user_ok(user) and user.lower() not in NOT_A_VALUE:
            yield match.start("user"), match.end("user"), "user", IDENTITY, user


def _prompts(text: str, start: int, end: int) -> Iterable[Raw]:
    for match in anchored_finditer(_PROMPT, text, start, end, "@", 32):
        user, host = match.group("user"), match.group("host")
        if _user_ok(user):
            yield match.start("user"), match.end("user"), "user", IDENTITY, user
        if not is_pseudonym(host) and host.lower() not in NOT_HOSTS:
            yield match.start("host"), match.end("host"), "host", IDENTITY, host


def _host_vars(text: str, start: int, end: int) -> Iterable[Raw]:
    for match in starts_finditer(_HOST_VAR, text, start, end, _HOST_VAR_STARTS):
        group = next(name for name in ("host", "host2", "host3") if match.group(name) is not None)
        host = match.group(group).rstrip(".-")
        if host_worth_hiding(host):
            yield match.start(group), match.start(group) + len(host), "host", IDENTITY, host


def _url_hosts(text: str, start: int, end: int) -> Iterable[Raw]:
    for match in anchored_finditer(_URL_HOST, text, start, end, "://", 16):
        host = match.group("host").rstrip(".-")
        if host_worth_hiding(host) and ("." not in host or _INTERNAL_TLD.search(host)):
            yield match.start("host"), match.start("host") + len(host), "host", IDENTITY, host


def _simple(pattern: re.Pattern[str], kind: str, anchor: tuple[str, int] | None = None) -> Detector:
    """A detector of ``pattern``'s whole matches; ``anchor``: (a literal every match holds, how far
    after the match's start at most), to try the pattern only near it."""

    def find(text: str, start: int, end: int) -> Iterable[Raw]:
        matches = (
            pattern.finditer(text, start, end)
            if anchor is None
            else anchored_finditer(pattern, text, start, end, *anchor)
        )
        for match in matches:
            yield match.start(), match.end(), kind, IDENTITY, match.group(0)

    return Detector(kind, find)


def _uuids(text: str, start: int, end: int) -> Iterable[Raw]:
    for match in UUID.finditer(text, start, end):
        if text[max(0, match.start() - 4) : match.start()] not in ("GPU-", "MIG-"):
            yield match.start(), match.end(), "uuid", IDENTITY, match.group(0)


def _macs(text: str, start: int, end: int) -> Iterable[Raw]:
    for match in MAC.finditer(text, start, end):
        value = match.group(0).lower().replace("-", ":")
        if value not in ("00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff"):
            yield match.start(), match.end(), "mac", IDENTITY, match.group(0)


def _ipv4s(text: str, start: int, end: int) -> Iterable[Raw]:
    for match in _IPV4.finditer(text, start, end):
        line_start = text.rfind("\n", 0, match.start()) + 1
        before = text[max(line_start, match.start() - 32) : match.start()]
        if _VERSION_CONTEXT.search(before):
            continue
        if _ip_worth_hiding(match.group(0)):
            yield match.start(), match.end(), "ip", IDENTITY, match.group(0)


def _ipv6s(text: str, start: int, end: int) -> Iterable[Raw]:
    for match in _IPV6.finditer(text, start, end):
        candidate = match.group(0)
        if candidate.count(":") < 2 or MAC.fullmatch(candidate):
            continue
        if _ip_worth_hiding(candidate):
            yield match.start(), match.end(), "ip", IDENTITY, candidate


def _serials(text: str, start: int, end: int) -> Iterable[Raw]:
    for match in _SERIAL.finditer(text, start, end):
        value = match.group("val")
        if not is_pseudonym(value) and value.lower() not in NOT_A_VALUE:
            yield match.start("val"), match.end("val"), "serial", IDENTITY, value


def _then_separator(text: str, start: int, end: int) -> bool:
    """``host``/``user`` … followed by an optional ``name``, quotes, spaces, then ``=`` or ``:``."""
    position = end
    tail = text[position : position + 5].lower()
    if tail.startswith("_name"):
        position += 5
    elif tail.startswith(("name", "-name")):
        position += 4 if tail.startswith("name") else 5
    limit = min(len(text), position + 12)
    while position < limit and text[position] in "\"' \t":
        position += 1
    return position < len(text) and text[position] in "=:"


def _after_slash(text: str, start: int, end: int) -> bool:
    """``users`` right after a path separator (``/Users/``, ``C:\\Users\\``)."""
    return start > 0 and text[start - 1] in "/\\"


_HEXDIGITS = frozenset("0123456789abcdefABCDEF")


def _ipv6_colons(text: str, start: int, end: int) -> bool:
    """``::`` between hex groups (``fe80::1``), not between names (``onnxruntime::Provider``)."""
    before = start
    while before > 0 and start - before < 5 and text[before - 1] in _HEXDIGITS:
        before -= 1
    previous = text[before - 1] if before > 0 else ""
    if previous.isalnum() or previous == "_":
        return False
    following = text[end] if end < len(text) else ""
    return not following or following in _HEXDIGITS or not (following.isalnum() or following == "_")


_HEX2 = "[0-9A-Fa-f]{2}"
_HEX4 = "[0-9A-Fa-f]{1,4}"

IDENTITY_DETECTORS: tuple[Detector, ...] = (
    Detector("home", _unix_homes, ("/home/",)),
    Detector("home-users", _homes, ("users", "documents and settings"), check=_after_slash),
    Detector("user-variable", _user_vars, ("user", "logname"), check=_then_separator),
    Detector("prompt", _prompts, ("@",)),
    Detector("host-variable", _host_vars, ("host", "server", "node", "fqdn"), check=_then_separator),
    Detector("url-host", _url_hosts, ("://",)),
    Detector("email", _simple(_EMAIL, "email", ("@", 64)).find, ("@",)),
    Detector("gpu-uuid", _simple(_GPU_UUID, "gpu-uuid").find, ("gpu-", "mig-")),
    Detector("uuid", _uuids, patterns=(re.compile(r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"),)),
    Detector(
        "mac",
        _macs,
        patterns=(re.compile(f":{_HEX2}:{_HEX2}:{_HEX2}:"), re.compile(f"-{_HEX2}-{_HEX2}-{_HEX2}-")),
    ),
    Detector("serial", _serials, ("serial",)),
)
"""The identity detectors that always apply."""

IPV4_DETECTOR = Detector("ipv4", _ipv4s, patterns=(re.compile(r"\.\d{1,3}\.\d{1,3}\."),))
IPV6_DETECTOR = Detector("ipv6", _ipv6s, ("::",), check=_ipv6_colons)
IPV6_FULL_DETECTOR = Detector(
    "ipv6-full", _ipv6s, patterns=(re.compile(f":{_HEX4}:{_HEX4}:{_HEX4}:{_HEX4}:{_HEX4}:"),)
)
"""IPv4 is left out for a value named as a version ("version": "10.2.0.19")."""
