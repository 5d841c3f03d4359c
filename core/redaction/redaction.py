"""The records of redaction: one replaced span (:class:`Redaction`), a redacted text, a masked preview."""

from __future__ import annotations

from dataclasses import dataclass

from fallback_doctor.core.redaction.detect_keys import IDENTITY


@dataclass(frozen=True, slots=True)
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


def mask(value: str, category: str) -> str:
    """A recognisable but harmless preview: "ko…(41 chars)" for a secret, "al…" for an identity."""
    value = value.replace("\n", " ")
    if category == IDENTITY:
        return (value[:2] + "…") if len(value) > 3 else "…"
    head = value[:2] if len(value) >= 10 else ""
    return f"{head}…({len(value)} chars)"
