"""What NVML's error codes mean (resources/compat/nvml_errors.json): a status word and a sentence."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fallback_doctor.core.platform.resource_files import RESOURCES


@dataclass(frozen=True)
class NvmlErrorMeaning:
    """What one nvmlReturn_t means: our status word and a sentence for people."""

    status: str
    meaning: str


def _load() -> list[dict[str, Any]]:
    text = RESOURCES.joinpath("compat/nvml_errors.json").read_text("utf-8")
    errors: list[dict[str, Any]] = json.loads(text)["errors"]
    return errors


_ERRORS = _load()

NVML_ERRORS: dict[int, NvmlErrorMeaning] = {
    int(row["code"]): NvmlErrorMeaning(str(row["status"]), str(row["meaning"])) for row in _ERRORS
}
"""nvmlReturn_t -> meaning (nvml.h values, the same as pynvml's NVML_ERROR_* constants)."""

NVML_STATUSES: frozenset[str] = frozenset(meaning.status for meaning in NVML_ERRORS.values())
"""Our status words, each the key of its sentence in resources/texts/evidence/nvml.json."""

NVML_NAMES: dict[int, str] = {int(row["code"]): str(row["name"]) for row in _ERRORS}
"""nvmlReturn_t -> its name in nvml.h (NVML_ERROR_LIBRARY_NOT_FOUND)."""


def describe_nvml_error(code: int | None, text: str | None = None) -> NvmlErrorMeaning:
    """The meaning of an nvmlReturn_t; codes we do not know read "error" with NVML's text."""
    if code is not None and code in NVML_ERRORS:
        return NVML_ERRORS[code]
    return NvmlErrorMeaning("error", text or f"NVML failed with code {code}")
