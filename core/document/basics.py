"""The report document's lowest layer: its name and version, JSON conversion, checking on demand.

core/views/text_report.py and core/flow/steps.py both build documents; what they share is here, below both, so
neither imports the other. The schema itself is resources/schema/report.schema.json (core/document/schema.py).
"""

from __future__ import annotations

import dataclasses
import os
from enum import Enum
from typing import Any

from fallback_doctor import __version__

SCHEMA = "gpu-fallback-doctor/report"
SCHEMA_VERSION = 2
"""2: the test inference, its samples and the probe outputs in one place, ``inference`` (1 kept the
CLI's under ``environment.inference`` and the wizard's elsewhere); ``steps`` lists the steps done."""
TOOL_VERSION = __version__

VALIDATE_ENV = "FALLBACK_DOCTOR_VALIDATE_DOCUMENTS"
"""When set (tests/conftest.py sets it), every document built or changed is checked against the schema."""


def to_jsonable(value: Any) -> Any:
    """Dataclasses, enums, tuples and mappings as plain JSON values (recursively)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(item) for item in value]
    return value


def checked(document: dict[str, Any]) -> dict[str, Any]:
    """The document, validated against the schema when FALLBACK_DOCTOR_VALIDATE_DOCUMENTS is set."""
    if os.environ.get(VALIDATE_ENV):
        from fallback_doctor.core.document.schema import check_document

        check_document(document)
    return document
