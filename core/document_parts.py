"""Reading the report document defensively: a part that is missing or of the wrong type is empty.

The pages, the HTML report and the fleet summary read documents that may come from another
machine's bundle (an older version, or edited by hand), so every access goes through these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else {}."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else []."""
    return value if isinstance(value, list) else []


def environment(document: Mapping[str, Any], part: str) -> dict[str, Any]:
    """One part of the document's environment snapshot ({} when it was not collected)."""
    return as_dict(as_dict(document.get("environment")).get(part))


def all_findings(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The document's findings (the static ones and the test inference's), in the document's ranking."""
    return [as_dict(f) for f in as_list(document.get("findings"))]
