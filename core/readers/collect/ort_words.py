"""What the ONNX Runtime collector says, in the evidence catalogue's words (texts/evidence/package.json).

The notes about a package and where the build's CUDA and cuDNN majors were read are kept twice in
the facts: in English for machine readers, and as catalogue words a report shows in its language.
"""

from __future__ import annotations

from typing import Any

from fallback_doctor.core.language.texts import words_text
from fallback_doctor.core.model.result import Words


def notes_fields(notes: list[Words]) -> dict[str, Any]:
    """The notes as OrtFacts keeps them: ``notes`` (English) and ``note_words``."""
    return {"notes": tuple(words_text(note) for note in notes), "note_words": tuple(notes)}


def needs_words(subject: str, lib: str, needed: str | None) -> Words:
    """Where a major was read: a library of the build links it (`readelf -d LIB | grep NEEDED`)."""
    return Words("evidence.req.needs", {"subject": subject, "lib": lib, "needed": needed or "?"})


def matrix_words(family: str, major: int | None, release: str) -> Words:
    """Where a major was read: the bundled table of ONNX Runtime releases (resources/compat)."""
    return Words("evidence.req.matrix", {"family": family, "major": major, "version": release})


def file_says(subject: str, text: str) -> Words:
    """Where a major was read: the build's own file says it (`cat onnxruntime/capi/version_info.py`)."""
    return Words("evidence.req.file_says", {"subject": subject, "text": text})
