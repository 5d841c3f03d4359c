"""Move the log knowledge's words from resources/signatures/*.json into the language catalogues.

The signature files held their human texts per language, ``{"en": "...", "ko": "..."}``: what a
line means (each signature's ``says``), a cause's title, explanation and fix (causes.json) and
the check that tells a cause from the others (separators.json). This writes each text, keyed,
into ``resources/texts/<lang>/labels/``:

- ``log_says.json``: ``log_says.<signature id>``;
- ``log_causes.json``: ``log_cause.<cause>.title``, ``.explanation``, ``.fix`` (the cause's
  ``source`` kept with the English, as the note ``_source.log_cause.<cause>``);
- ``log_told_apart.json``: ``log_told_apart.<cause>``;

and leaves the key in the signature file (``"says": "log_says.cuda.failure_code"``, a cause's
``{"title": "log_cause.<cause>.title", ...}``, a separator's ``"log_told_apart.<cause>"``). It is
safe to run again: a text already moved is a key and is left alone; a catalogue entry is
replaced by the signature file's words only where the file still holds them.

    .venv/bin/python scripts/move_signature_words.py [--check]

``--check`` changes nothing and exits 1 when a text is still in a signature file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SIGNATURES = ROOT / "resources" / "signatures"
TEXTS = ROOT / "resources" / "texts"
CAUSE_PARTS = ("title", "explanation", "fix")
NOTES = {
    "log_says.json": "what a log line means, per signature (core/readers/logs/signatures.py; the signature, "
    "its example line and who prints it in which releases: resources/signatures/*.json, by id)",
    "log_causes.json": "a log cause's title, explanation and fix (explain-log, the log finding); "
    "the source of each cause's facts is the note _source.log_cause.<cause> of the English file",
    "log_told_apart.json": "what tells each cause apart from the others one message can have, and "
    "what the full diagnose sees on the machine (core/readers/logs/separators.py)",
}


def _per_language(value: Any) -> bool:
    return isinstance(value, dict) and "en" in value


def collect(documents: dict[str, dict[str, Any]]) -> dict[str, dict[str, dict[str, str]]]:
    """Take the words out of the signature documents (changed in place, keys left behind):
    ``{catalogue file: {lang: {key: words}}}``."""
    found: dict[str, dict[str, dict[str, str]]] = {name: {} for name in NOTES}

    def put(file: str, key: str, words: dict[str, Any]) -> None:
        for lang, text in words.items():
            if lang != "source":
                found[file].setdefault(lang, {})[key] = str(text)

    for document in documents.values():
        for signature in document.get("signatures", ()):
            if _per_language(signature.get("says")):
                key = f"log_says.{signature['id']}"
                put("log_says.json", key, signature["says"])
                signature["says"] = key
        for cause, entry in dict(document.get("causes", {})).items():
            if cause.startswith("_") or not _per_language(entry):
                continue
            keys = {part: f"log_cause.{cause}.{part}" for part in CAUSE_PARTS}
            for lang, words in entry.items():
                if lang == "source":
                    continue
                for part in CAUSE_PARTS:
                    if words.get(part):
                        found["log_causes.json"].setdefault(lang, {})[keys[part]] = str(words[part])
            if entry.get("source"):
                found["log_causes.json"].setdefault("en", {})[f"_source.log_cause.{cause}"] = entry["source"]
            document["causes"][cause] = keys
        for cause, entry in dict(document.get("separators", {})).items():
            if _per_language(entry):
                key = f"log_told_apart.{cause}"
                put("log_told_apart.json", key, entry)
                document["separators"][cause] = key
    return found


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Move the words (or, with --check, say whether any are left in the signature files)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if words are left")
    args = parser.parse_args(argv)
    paths = sorted(SIGNATURES.glob("*.json"))
    documents = {path.name: json.loads(path.read_text(encoding="utf-8")) for path in paths}
    found = collect(documents)
    moved = sum(len(words) for per_lang in found.values() for words in per_lang.values())
    if args.check:
        print(f"{moved} texts still in resources/signatures/")
        return 1 if moved else 0
    for name, per_lang in found.items():
        for lang, words in per_lang.items():
            target = TEXTS / lang / "labels" / name
            current = json.loads(target.read_text(encoding="utf-8")) if target.is_file() else {}
            merged = {"_source": NOTES[name]} if lang == "en" else {}
            merged.update(current)
            merged.update(words)
            _write_json(target, merged)
    for path in paths:
        _write_json(path, documents[path.name])
    print(f"moved {moved} texts into resources/texts/<lang>/labels/{{{','.join(NOTES)}}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
