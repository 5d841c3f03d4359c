"""The report document's JSON Schema (resources/schema/report.schema.json) and checking a document by it.

jsonschema is imported only here, and only when a document is checked (opening a bundle, the
tests): ``diagnose --quick`` never pays for it. By hand: ``python -m jsonschema`` or
``check-jsonschema --schemafile report.schema.json report.json``.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from fallback_doctor.core.platform.resource_files import RESOURCES


class DocumentError(ValueError):
    """A document off the schema; ``path`` names the field ("findings[0].texts.en.detail")."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path = path
        self.problem = problem


@cache
def report_schema() -> dict[str, Any]:
    """The schema, as shipped in the package."""
    text = RESOURCES.joinpath("schema", "report.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> Any:
    import jsonschema

    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def field_path(parts: Any) -> str:
    """``["findings", 0, "texts"]`` as ``findings[0].texts``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def document_problems(document: Any, limit: int = 5) -> list[DocumentError]:
    """The first ``limit`` places where ``document`` breaks the schema, most specific first."""
    import jsonschema

    errors = sorted(_validator().iter_errors(document), key=lambda e: (list(e.absolute_path), e.message))
    found: list[DocumentError] = []
    for error in errors[:limit]:
        best = jsonschema.exceptions.best_match([error])
        message = best.message if len(best.message) <= 200 else best.message[:197] + "..."
        found.append(DocumentError(field_path(best.absolute_path) or "(the document)", message))
    return found


def check_document(document: Any) -> None:
    """Raise :class:`DocumentError` at the first field that breaks the schema."""
    problems = document_problems(document, limit=1)
    if problems:
        raise problems[0]
