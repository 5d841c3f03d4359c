"""A bundle made elsewhere, read for showing: its document with the recorded series replayed.

The wizard shows a bundle with the same pages as a live run; the graph is drawn from the bundle's
samples.csv (the redacted copy of ``inference.series``), its marks and source states from the
document. By hand: ``fallback-doctor bundle show FILE``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_INTEGER_COLUMNS = frozenset({"gpu_index", "pid"})


def _rows(text: str) -> Iterator[dict[str | None, str | None]]:
    """The rows of a samples.csv up to the first one csv cannot read (a crafted or damaged file:
    what came before it is still drawn). newline="": a lone CR is a line end, as csv expects."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        yield from reader
    except csv.Error:
        return


def series_from_samples_csv(
    text: str | None,
    document: dict[str, Any],
    provenance: str,
    provenance_words: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The utilization series replayed from a bundle's samples.csv (the marks and status from the report).

    None when there is no samples.csv; a cell left empty is a reading that was not available.
    """
    if not text:
        return None
    samples: list[dict[str, object]] = []
    for row in _rows(text):
        sample: dict[str, object] = {}
        for key, raw in row.items():
            if key is None:
                continue
            if raw is None or raw == "":
                sample[key] = None
                continue
            try:
                number = float(raw)
            except ValueError:
                sample[key] = raw
            else:
                sample[key] = int(number) if key in _INTEGER_COLUMNS and number.is_integer() else number
        samples.append(sample)
    recorded = dict(((document.get("inference") or {}).get("series")) or {})
    return {
        **recorded,
        "samples": samples,
        "marks": list(recorded.get("marks") or []),
        "recorded_here": False,
        "provenance": provenance,
        "provenance_words": provenance_words,
    }


BUNDLE_SAMPLES = "samples.csv of the bundle (recorded on the other machine)"
"""Where an opened bundle's GPU readings come from (in the reader's language: BUNDLE_SAMPLES_WORDS)."""
BUNDLE_SAMPLES_WORDS: dict[str, Any] = {"id": "evidence.provenance.bundle", "params": {}}


def open_for_showing(path: str | Path, provenance: str | None = None) -> dict[str, object]:
    """``{"document", "info"}`` of a bundle: the checked document (series replayed) and where it is from.

    Raises BundleRefusedError (core/bundle/safe_open.py) when the bundle is refused, naming why.
    """
    from fallback_doctor.core.bundle.safe_open import open_bundle

    opened = open_bundle(path)
    document = dict(opened.document)
    words = BUNDLE_SAMPLES_WORDS if provenance is None else None
    series = series_from_samples_csv(opened.samples_csv, document, provenance or BUNDLE_SAMPLES, words)
    if series is not None:
        document["inference"] = {**(document.get("inference") or {}), "series": series}
    manifest = opened.manifest
    return {
        "document": document,
        "info": {
            "name": opened.path.name,
            "created": str(manifest.get("created") or "?"),
            "version": str(manifest.get("tool_version") or "?"),
            "redacted": opened.redacted,
            "problems": list(opened.integrity_problems),
        },
    }
