"""Split every bilingual catalogue file under resources/texts/ into one folder per language.

A bilingual file holds every language side by side::

    resources/texts/cuda.json          {"key": {"en": {...}, "ko": {...}, "source": "..."}}
    resources/texts/labels/ui.json     {"key": {"en": "...", "ko": "..."}, "_source": "..."}

and becomes, per language, the words of that language only::

    resources/texts/en/findings/cuda.json   {"key": {"title": ..., "detail": ..., "source": "..."}}
    resources/texts/ko/findings/cuda.json   {"key": {"title": ..., "detail": ...}}
    resources/texts/en/labels/ui.json       {"_source": "...", "key": "..."}

The ``source`` of a fact and the ``_`` notes stay with the English. Entries already in a
per-language file are kept; an entry of the bilingual file replaces the one with its key (the
bilingual file is the newer word: a branch merged after the split added or changed it). The
bilingual file is then removed, so running the script again changes nothing (idempotent).
resources/texts/evidence/ (regular-expression templates, not a catalogue) is left alone.

Run: ``python scripts/split_catalogues.py [resources/texts]``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEXTS = ROOT / "resources" / "texts"


def _is_language(name: str) -> bool:
    return name.isalpha() and name.islower() and 2 <= len(name) <= 3


EVIDENCE_LEFT = "words.json"
"""The English read back by core/language/evidence_words.py: stays bilingual until that module goes."""


def bilingual_files(texts: Path) -> list[tuple[Path, str, str]]:
    """Each bilingual file left, with the kind of catalogue it is ("findings" or "labels") and the
    name it takes there (the evidence words: ``evidence_<area>.json`` among the labels)."""
    found = [(path, "findings", path.name) for path in sorted(texts.glob("*.json"))]
    found += [(path, "labels", path.name) for path in sorted(texts.glob("labels/*.json"))]
    found += [
        (path, "labels", f"evidence_{path.name}")
        for path in sorted(texts.glob("evidence/*.json"))
        if path.name != EVIDENCE_LEFT
    ]
    return found


def split_entries(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """One bilingual file's entries, per language (notes and sources with English)."""
    per_lang: dict[str, dict[str, Any]] = {"en": {}}
    for key, entry in data.items():
        if key.startswith("_") or not isinstance(entry, dict):
            per_lang["en"][key] = entry
            continue
        for lang, words in entry.items():
            if lang == "source":
                continue
            if not _is_language(lang):
                raise ValueError(f"{key}: {lang!r} is neither a language nor 'source'")
            value = dict(words) if isinstance(words, dict) else words
            if lang == "en" and "source" in entry:
                if isinstance(value, dict):
                    value["source"] = entry["source"]
                else:  # a label is words only: its source is a note beside it
                    per_lang["en"][f"_source.{key}"] = entry["source"]
            per_lang.setdefault(lang, {})[key] = value
    return per_lang


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def split(texts: Path = TEXTS) -> list[Path]:
    """Convert every bilingual file under ``texts``; the files written."""
    written: list[Path] = []
    for source, kind, name in bilingual_files(texts):
        data = json.loads(source.read_text(encoding="utf-8"))
        for lang, entries in split_entries(data).items():
            target = texts / lang / kind / name
            merged: dict[str, Any] = {}
            if target.exists():
                merged = json.loads(target.read_text(encoding="utf-8"))
            merged.update(entries)
            _write(target, merged)
            written.append(target)
        source.unlink()
    labels = texts / "labels"
    if labels.is_dir() and not any(labels.iterdir()):
        labels.rmdir()
    return written


def main(argv: list[str]) -> int:
    """Split the catalogue folder named (resources/texts by default); print what was written."""
    texts = Path(argv[0]) if argv else TEXTS
    for path in split(texts):
        print(path.relative_to(texts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
