"""Redaction: secrets become ``[REDACTED]``, identities become consistent pseudonyms.

A step of its own (as in sos): :class:`Redactor` finds what must not leave the site in a text
and returns the new text with every redaction's span and kind, so a preview can show each one
before anything is written. The detectors are small and declarative (:mod:`detect_secrets`,
:mod:`detect_identities`, one :class:`~fallback_doctor.core.redaction.scan.Detector` each, with a
literal prefilter); the pseudonym map is :mod:`pseudonyms`; the decoded views (JSON escapes and
URL encoding undone, up to three levels) are :mod:`views`. UTF-16 and gzip are undone before a
text gets here (:mod:`content`).

Each text is scanned once: what :meth:`Redactor.learn` found is kept until :meth:`Redactor.redact`
replaces it. Once a value is known it is replaced wherever it appears as a whole token, in every
member, except a value spelled like one of our own words (:mod:`words`: a host named ``gpu``),
which is replaced only where a detector finds it as a name. JSON members: keys that are names
(``gpu``, ``CUDA_VISIBLE_DEVICES``) and codes (``"verdict": "gpu_unusable"``) are never touched.

By hand, a rough equivalent: ``grep -nE 'password|token|koba-|BEGIN .*PRIVATE KEY' FILE``.
"""

from __future__ import annotations

import itertools
import json
import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

from fallback_doctor.core.redaction.detect_identities import (
    IDENTITY_DETECTORS,
    IPV4_DETECTOR,
    IPV6_DETECTOR,
    IPV6_FULL_DETECTOR,
    NOT_USERS,
    UUID,
    host_worth_hiding,
)
from fallback_doctor.core.redaction.detect_keys import (
    EXTRA,
    HOST_KEY,
    IDENTITY,
    MARKER,
    NOT_A_VALUE,
    SECRET,
    SERIAL_KEY,
    USER_KEY,
    UUID_KEY,
    Raw,
    is_secret_key,
    kind_of_key,
)
from fallback_doctor.core.redaction.detect_secrets import SECRET_DETECTORS
from fallback_doctor.core.redaction.pseudonyms import Pseudonyms, is_pseudonym
from fallback_doctor.core.redaction.redaction import RedactedText, Redaction, mask
from fallback_doctor.core.redaction.scan import Detector, first_character_patterns, occurrences, scan
from fallback_doctor.core.redaction.views import View, decoded_views, escape_boundaries
from fallback_doctor.core.redaction.words import is_common_word, is_our_identifier

__all__ = [
    "EXTRA",
    "IDENTITY",
    "MARKER",
    "SECRET",
    "Redactor",
    "is_secret_key",
    "local_identity",
    "redact_json_text",
]

_PRIORITY = {SECRET: 3, EXTRA: 2, IDENTITY: 1}

_NO_IPV4 = (*SECRET_DETECTORS, *IDENTITY_DETECTORS, IPV6_DETECTOR, IPV6_FULL_DETECTOR)
_ALL = (*_NO_IPV4, IPV4_DETECTOR)


_KnownPatterns = tuple[dict[str, list[tuple[str, str]]], list[tuple[re.Pattern[str], tuple[str, ...]]]]
"""The known values by their lower case, and the patterns that find them."""


class _Hit(NamedTuple):
    """One span to replace (a tuple: thousands are made per member, and a frozen dataclass's
    ``__init__`` sets each field through ``object.__setattr__``)."""

    start: int
    end: int
    kind: str
    category: str
    replacement: str


@dataclass
class _Scanned:
    """What one text holds: its decoded views and every detector's matches in it and in each view."""

    views: list[View]
    found: list[list[Raw]]
    lowered: list[str]
    """Each text's ``lower()`` (the text's, then each view's), made once for every search."""
    learned: bool = False


def _scan_text(text: str, skip_ipv4: bool) -> _Scanned:
    views = decoded_views(text)
    detectors: tuple[Detector, ...] = _NO_IPV4 if skip_ipv4 else _ALL
    texts = [text, *(view.text for view in views)]
    lowered = [item.lower() for item in texts]
    return _Scanned(
        views, [scan(item, detectors, low) for item, low in zip(texts, lowered, strict=True)], lowered
    )


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
        self._literal_cache: tuple[int, list[tuple[str, str]]] = (-1, [])
        self._pattern_cache: tuple[object, _KnownPatterns] = (None, ({}, []))
        self._scanned: dict[tuple[str, bool], _Scanned] = {}

    # -- learning --------------------------------------------------------------------------

    def _remember(self, kind: str, value: str) -> None:
        if kind == "user" and (len(value) < 3 or value.lower() in NOT_USERS or is_pseudonym(value)):
            return
        if kind == "host" and (len(value) < 3 or not host_worth_hiding(value)):
            return
        self._known.setdefault(kind, set()).add(value)
        self.pseudonyms.get(kind, value)

    def _scan(self, text: str, skip_ipv4: bool = False) -> _Scanned:
        key = (text, skip_ipv4)
        scanned = self._scanned.get(key)
        if scanned is None:
            scanned = _scan_text(text, skip_ipv4)
            self._scanned[key] = scanned
        return scanned

    def learn(self, text: str, *, skip_ipv4: bool = False) -> None:
        """Note the identities in ``text`` (so they are replaced in every member, not only here)."""
        scanned = self._scan(text, skip_ipv4)
        if not scanned.learned:
            for found in scanned.found:
                self._learn_from(found)
            scanned.learned = True

    def _learn_from(self, found: Iterable[Raw]) -> None:
        seen: set[tuple[str, str]] = set()
        for _start, _end, kind, category, value in found:
            if category != IDENTITY or value is None or (kind, value) in seen:
                continue
            seen.add((kind, value))
            self.pseudonyms.get(kind, value)
            if kind in ("user", "host"):
                self._remember(kind, value)
            elif kind == "email":
                self._remember("user", value.split("@", 1)[0])

    def learn_json(self, value: object, key: str | None = None) -> None:
        """:meth:`learn` on every string (and key) inside a JSON value, and on values named by their key."""
        from fallback_doctor.core.redaction.redact_json import learn_json

        learn_json(self, value, key)

    def remember_named(self, key: str, value: str) -> None:
        """A value stored under a host or user key ("hostname": "gpu-7") is that identity."""
        stripped = value.strip()
        if stripped and " " not in stripped:
            if HOST_KEY.match(key):
                self._remember("host", stripped)
            elif USER_KEY.match(key):
                self._remember("user", stripped)

    # -- redacting -------------------------------------------------------------------------

    def _literals(self) -> list[tuple[str, str]]:
        """(kind, value) of every known identity worth a bare-token search, longest first."""
        users = {v for v in self.pseudonyms.known("user") if len(v) >= 3 and v.lower() not in NOT_USERS}
        users |= self._known.get("user", set())
        hosts = {h for h in self.pseudonyms.known("host") if len(h) >= 3} | self._known.get("host", set())
        others: set[tuple[str, str]] = set()
        for kind in ("serial", "email"):
            others.update((kind, v) for v in self.pseudonyms.known(kind) if len(v) >= 4)
        stamp = hash((frozenset(users), frozenset(hosts), frozenset(others)))
        if self._literal_cache[0] == stamp:
            return self._literal_cache[1]
        found = [("user", v) for v in users] + [("host", v) for v in hosts] + sorted(others)
        found = [(kind, value) for kind, value in found if not is_common_word(value)]
        found.sort(key=lambda item: -len(item[1]))
        self._literal_cache = (stamp, found)
        return found

    def _literal_hits(self, text: str, lowered: str) -> Iterable[Raw]:
        """Every known value where it stands as a whole token in ``text`` (``lowered``: its lower())."""
        if len(lowered) != len(text):
            lowered = "".join(char.lower() if len(char.lower()) == 1 else char for char in text)
        known, patterns = self._literal_patterns()
        for position, needle in occurrences(lowered, patterns):
            end = position + len(needle)
            if not _whole_token(text, position, end):
                continue
            for kind, value in known[needle]:
                if kind != "user" or text[position:end] == value:
                    yield position, end, kind, IDENTITY, text[position:end]
        for literal in self.extra_literals:
            needle = literal.lower()
            start = lowered.find(needle)
            while start >= 0:
                yield start, start + len(literal), "extra", EXTRA, None
                start = lowered.find(needle, start + 1)

    def _literal_patterns(self) -> _KnownPatterns:
        """The known values by their lower case, and the patterns that find them (one per first letter)."""
        literals = self._literals()
        if self._pattern_cache[0] is not literals:
            known: dict[str, list[tuple[str, str]]] = {}
            for kind, value in literals:
                known.setdefault(value.lower(), []).append((kind, value))
            self._pattern_cache = (literals, (known, first_character_patterns(known)))
        return self._pattern_cache[1]

    def _hits(self, text: str, skip_ipv4: bool) -> list[_Hit]:
        scanned = self._scanned.pop((text, skip_ipv4), None) or _scan_text(text, skip_ipv4)
        self._scanned.pop((text, not skip_ipv4), None)
        views = scanned.views
        texts = [text, *(view.text for view in views)]
        if not scanned.learned:
            for found in scanned.found:
                self._learn_from(found)
        hits: list[_Hit] = []
        replacements: dict[tuple[str, str], str] = {}
        for view_index, view_text in enumerate(texts):
            # Known values (learned here or in other members) wherever they appear as whole tokens.
            for start, end, kind, category, value in itertools.chain(
                scanned.found[view_index], self._literal_hits(view_text, scanned.lowered[view_index])
            ):
                if view_index > 0:
                    start, end = views[view_index - 1].raw_span(start, end)
                if end <= start:
                    continue
                if category == IDENTITY and value is not None:
                    replacement = replacements.get((kind, value))
                    if replacement is None:
                        replacement = replacements[kind, value] = self.pseudonyms.get(kind, value)
                        if kind in ("user", "host"):
                            self._remember(kind, value)
                else:
                    replacement = MARKER
                if text[start:end] != replacement:
                    hits.append(_Hit(start, end, kind, category, replacement))
            scanned.found[view_index] = []
        return _merge(hits, escape_boundaries(text, views) if views else None)

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
        if not stripped or stripped.lower() in NOT_A_VALUE or is_pseudonym(stripped):
            return None
        start = text.index(stripped)
        end = start + len(stripped)
        if SERIAL_KEY.search(key):
            kind, category, replacement = "serial", IDENTITY, self.pseudonyms.get("serial", stripped)
        elif is_secret_key(key) and not is_our_identifier(stripped):
            kind, category, replacement = kind_of_key(key), SECRET, MARKER
        elif HOST_KEY.match(key) and host_worth_hiding(stripped) and " " not in stripped:
            self._remember("host", stripped)
            kind, category, replacement = "host", IDENTITY, self.pseudonyms.get("host", stripped)
        elif USER_KEY.match(key) and " " not in stripped and stripped.lower() not in NOT_USERS:
            self._remember("user", stripped)
            kind, category, replacement = "user", IDENTITY, self.pseudonyms.get("user", stripped)
        elif UUID_KEY.search(key) and UUID.search(stripped) and " " not in stripped:
            kind = "gpu-uuid" if stripped.upper().startswith(("GPU-", "MIG-")) else "uuid"
            category, replacement = IDENTITY, self.pseudonyms.get(kind, stripped)
        else:
            return None
        self._scanned.pop((text, False), None)
        redaction = Redaction(kind, category, start, end, replacement, mask(stripped, category))
        return RedactedText(text[:start] + replacement + text[end:], (redaction,))

    # -- JSON ------------------------------------------------------------------------------

    def redact_json(
        self, value: object, *, key: str | None = None, path: str = ""
    ) -> tuple[object, list[Redaction]]:
        """Redact every string of a JSON value; secret-named keys lose their values whole.

        Environment dictionaries (under "environment", "env", "environ") keep only allowlisted
        variables (resources/redaction/environment.json); the others are left out and counted,
        and an allowed variable whose value is not known to be a setting loses its value.
        Returned redactions carry their JSON path in ``where``; their spans are within that string.
        """
        from fallback_doctor.core.redaction.redact_json import walk

        found: list[Redaction] = []
        result = walk(self, value, key, path, found)
        return result, found


def _strength(hit: _Hit) -> tuple[int, int, bool]:
    return _PRIORITY[hit.category], hit.end - hit.start, hit.category == IDENTITY


def _merge(hits: list[_Hit], widen: Callable[[int, int], tuple[int, int]] | None) -> list[_Hit]:
    """Non-overlapping hits in order; where hits overlap, the union takes the stronger replacement."""
    if widen is not None:
        widened = []
        for hit in hits:
            span = widen(hit.start, hit.end)
            widened.append(hit if span == (hit.start, hit.end) else hit._replace(start=span[0], end=span[1]))
        hits = widened
    hits.sort(key=lambda h: (h.start, h.start - h.end))
    merged: list[_Hit] = []
    for hit in hits:
        if merged and hit.start < merged[-1].end:
            last = merged[-1]
            if hit.end <= last.end and _strength(last) >= _strength(hit):
                continue  # inside the last one, and no stronger: nothing changes
            stronger = last if _strength(last) >= _strength(hit) else hit
            merged[-1] = _Hit(
                last.start, max(last.end, hit.end), stronger.kind, stronger.category, stronger.replacement
            )
        else:
            merged.append(hit)
    return merged


def _whole_token(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] has no letter or digit right before or after it (ASCII, as names are)."""
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    return not (before.isascii() and before.isalnum()) and not (after.isascii() and after.isalnum())


def redact_json_text(redactor: Redactor, text: str) -> RedactedText:
    """Redact JSON text structurally when it parses, as plain text otherwise."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return redactor.redact(text)
    redacted, found = redactor.redact_json(value)
    return RedactedText(json.dumps(redacted, ensure_ascii=False, indent=2), tuple(found))
