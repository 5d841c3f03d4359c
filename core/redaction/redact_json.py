"""Redaction of a JSON value (the report, the environment record): values, never names or codes.

- A key that is a name (``gpu``, ``CUDA_VISIBLE_DEVICES``, ``schema_version``) is left as it is;
  a key that is data (a path, a host) is redacted like a value.
- A code (``"verdict": "gpu_unusable"``, ``"schema": "gpu-fallback-doctor/report"``, a finding
  id or cause) is left as it is.
- A value under a telling key is replaced whole (``"password": 987654321`` -> ``[REDACTED]``,
  ``"hostname": "gpu"`` -> ``host-1``); numbers too.
- A finding's words as a key and parameters (``text``): the key is ours, the parameters' names
  are a template's fields, not telling keys; their values are redacted as any text.
- Environment dictionaries keep only allowlisted variables (resources/redaction/environment.json),
  and an allowed variable whose value is not known to be a setting (``BAREUN_CRED``) loses it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from fallback_doctor.core.readers.knowledge.environment import allowlist
from fallback_doctor.core.redaction.detect_keys import (
    COUNT_LIKE,
    MARKER,
    SECRET,
    SERIAL_KEY,
    is_secret_key,
    kind_of_key,
)
from fallback_doctor.core.redaction.redaction import Redaction, mask

if TYPE_CHECKING:
    from fallback_doctor.core.redaction.redaction import RedactedText


class Redactor(Protocol):
    """What the walk needs of :class:`~fallback_doctor.core.redaction.redact.Redactor`."""

    def learn(self, text: str, *, skip_ipv4: bool = False) -> None: ...

    def remember_named(self, key: str, value: str) -> None: ...

    def redact(self, text: str, *, key: str | None = None) -> RedactedText: ...


_NAME_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,80}$")
_ENV_KEY = re.compile(r"(?:^|_)(?:environment|env|environ)$", re.IGNORECASE)
_VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CODE_KEYS = frozenset(
    {
        "schema",
        "id",
        "cause",
        "causes",
        "layer",
        "severity",
        "verdict",
        "code",
        "kind",
        "status",
        "category",
        "form",
        "signature",
        "finding",
        "finding_id",
        "strategy",
        "outcome",
        "state",
    }
)
"""Keys whose values are our own codes (ids, causes, verdicts, schema names)."""
_CODE = re.compile(r"^[A-Za-z0-9_.:/\-]{1,100}$")


_FIELDS = "\0fields"
"""The context of a text record's parameters: their names are a template's fields (``{owner}``,
``{key}``), ours, not telling keys; their values are redacted as free text."""


def _text_record(value: Mapping[str, object]) -> bool:
    """A finding's words as a key and parameters (``{"key": "cuda.missing", "params": {...}}``)."""
    key = value.get("key")
    return isinstance(key, str) and _CODE.match(key) is not None and isinstance(value.get("params"), dict)


def _context(parent: Mapping[str, object], parent_key: str | None, name: str) -> str | None:
    """The key a child is read under: none inside a text record's parameters."""
    if parent_key == _FIELDS:
        return None
    if name == "params" and _text_record(parent):
        return _FIELDS
    return name


def learn_json(redactor: Redactor, value: object, key: str | None = None) -> None:
    """:meth:`Redactor.learn` on every string inside a JSON value, and on values named by their key."""
    if isinstance(value, dict):
        record = _text_record(value)
        for item_key, item in value.items():
            name = str(item_key)
            if not _NAME_KEY.match(name):
                redactor.learn(name)
            if record and name == "key":
                continue  # the text's key: our code
            learn_json(redactor, item, _context(value, key, name))
    elif isinstance(value, list):
        for item in value:
            learn_json(redactor, item, key)
    elif isinstance(value, str):
        if _is_code(key, value):
            return
        redactor.learn(value)
        if key is not None:
            redactor.remember_named(key, value)


def _is_code(key: str | None, value: str) -> bool:
    return (
        key is not None and key.lower() in CODE_KEYS and _CODE.match(value) is not None and "@" not in value
    )


def walk(redactor: Redactor, value: object, key: str | None, path: str, found: list[Redaction]) -> Any:
    """The redacted copy of ``value``; what was replaced is appended to ``found``."""
    if isinstance(value, dict):
        if key is not None and _ENV_KEY.search(key) and _is_env(value):
            value = _filter_environment(value, path, found)
        label = _label_of(value)
        record = _text_record(value)
        out: dict[str, object] = {}
        for item_key, item in value.items():
            name = str(item_key)
            child = f"{path}.{name}" if path else name
            new_key = (
                name if _NAME_KEY.match(name) else _walk_string(redactor, name, None, child + "#key", found)
            )
            if record and name == "key":
                out[new_key] = item  # the text's key: our code
                continue
            context = label if (name == "value" and label is not None) else _context(value, key, name)
            out[new_key] = walk(redactor, item, context, child, found)
        return out
    if isinstance(value, list):
        return [walk(redactor, item, key, f"{path}[{index}]", found) for index, item in enumerate(value)]
    if isinstance(value, str):
        if _is_code(key, value):
            return value
        return _walk_string(redactor, value, key, path, found)
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and key is not None
        and (is_secret_key(key) or SERIAL_KEY.search(key))
        and not COUNT_LIKE.search(key)
    ):
        found.append(Redaction(kind_of_key(key), SECRET, 0, 0, MARKER, mask(str(value), SECRET), path))
        return MARKER
    return value


def _walk_string(redactor: Redactor, text: str, key: str | None, path: str, found: list[Redaction]) -> str:
    result = redactor.redact(text, key=key)
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


def _filter_environment(env: Mapping[str, Any], path: str, found: list[Redaction]) -> dict[str, object]:
    allowed = allowlist()
    kept: dict[str, object] = {}
    for name, item in env.items():
        where = f"{path}.{name}" if path else str(name)
        if not allowed.allows(name):
            found.append(Redaction("environment-variable", SECRET, 0, 0, "(left out)", f"{name}=…", where))
        elif not allowed.keeps_value(name) and item.strip():
            found.append(Redaction("environment-value", SECRET, 0, 0, MARKER, f"{name}=…", where))
            kept[name] = MARKER
        else:
            kept[name] = item
    return kept


def _is_env(value: Mapping[str, object]) -> bool:
    return all(isinstance(item, str) for item in value.values()) and all(
        _VAR_NAME.fullmatch(str(name)) for name in value
    )


def _label_of(value: Mapping[str, object]) -> str | None:
    if "value" not in value:
        return None
    for field in ("label", "name", "key"):
        label = value.get(field)
        if isinstance(label, str):
            return label
    return None
