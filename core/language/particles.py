"""Korean particles after names and numbers: {library:이/가} reads "libcurand.so.10이".

A particle after a variable depends on how the variable's last character is read aloud: after
a final consonant 이/을/은/과/으로, after a vowel 가/를/는/와/로 (and 로 after a final ㄹ).
Hangul syllables carry their final consonant; digits and Latin letters are read by their Korean
names (resources/texts/ko/readings.json: 10 십, 1 일, N 엔, T 티), English words by their usual
loanword ending (runtime 런타임, provider 프로바이더). When nothing can be read (a symbol) the
combined form 이(가) is written. :func:`fill` is str.format_map with these specs, and it drops
the template's "." after a value that already ends a sentence ("…by the user." + "." ).
This is the Korean catalogue's grammar hook (resources/texts/ko/grammar.json, core/language/texts.py):
no other language runs it.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping
from functools import cache
from typing import Any

from fallback_doctor.core.platform.resource_files import RESOURCES

VOWEL = "vowel"
CONSONANT = "consonant"
RIEUL = "rieul"
"""Final ㄹ: like a consonant, except that 으로/로 takes 로."""

_HANGUL_FIRST, _HANGUL_LAST = 0xAC00, 0xD7A3
_RIEUL_INDEX = 8
_SKIPPED_TAIL = " \t\n'\"`)]}>,;:!?»”’…"
_PARTICLE_SPEC = re.compile(r"^[\uac00-\ud7a3]+/[\uac00-\ud7a3]+$")
_COMBINED = {"이(가)": "이/가", "을(를)": "을/를", "은(는)": "은/는", "(으)로": "으로/로", "과(와)": "과/와"}
_COMBINED_AFTER_FIELD = re.compile(r'(\([^()]*\)|\)|")?(이\(가\)|을\(를\)|은\(는\)|\(으\)로|과\(와\))')


@cache
def _readings() -> dict[str, Any]:
    folder = RESOURCES.joinpath("texts", "ko")  # the Korean catalogue's own data
    data: dict[str, Any] = json.loads(folder.joinpath("readings.json").read_text(encoding="utf-8"))
    return data


def final_sound(text: str) -> str | None:
    """VOWEL, CONSONANT or RIEUL for how ``text`` ends when read aloud; None when it cannot be read."""
    stripped = text.rstrip(_SKIPPED_TAIL)
    if not stripped:
        return None
    last = stripped[-1]
    if _HANGUL_FIRST <= ord(last) <= _HANGUL_LAST:
        final = (ord(last) - _HANGUL_FIRST) % 28
        return VOWEL if final == 0 else RIEUL if final == _RIEUL_INDEX else CONSONANT
    if last.isdigit() and last.isascii():
        return _number_final(re.search(r"[0-9]+$", stripped).group(0))  # type: ignore[union-attr]
    if last.isascii() and last.isalpha():
        return _latin_final(re.search(r"[A-Za-z]+$", stripped).group(0))  # type: ignore[union-attr]
    return None


def _number_final(digits: str) -> str:
    readings = _readings()
    if set(digits) == {"0"}:
        return str(readings["digits"]["0"][1])
    zeros = len(digits) - len(digits.rstrip("0"))
    if zeros == 0:
        return str(readings["digits"][digits[-1]][1])
    power = readings["powers_of_ten"].get(str(zeros)) or readings["powers_of_ten"]["4"]
    return str(power[1])


def _latin_final(letters: str) -> str:
    """An acronym or a single letter by the letters' names; a word by its loanword ending."""
    readings = _readings()
    upper_tail = re.search(r"[A-Z]+$", letters)
    if upper_tail and (len(upper_tail.group(0)) > 1 or len(letters) == 1 or letters.isupper()):
        return str(readings["letters"][letters[-1]][1])
    if len(letters) == 1:
        return str(readings["letters"][letters.upper()][1])
    word = re.search(r"[A-Z]?[a-z]+$", letters)
    ending = (word.group(0) if word else letters).lower()
    for suffix, final, _example in readings["word_endings"]:
        if ending.endswith(suffix):
            return str(final)
    return str(readings["word_default"])


def is_particle_spec(spec: str) -> bool:
    """Whether a format spec is a particle pair such as "이/가" (after a consonant / after a vowel)."""
    return bool(_PARTICLE_SPEC.match(spec))


def particle(word: str, spec: str) -> str:
    """The particle of ``spec`` ("이/가", "을/를", "은/는", "과/와", "으로/로") that fits after ``word``."""
    after_consonant, after_vowel = spec.split("/", 1)
    final = final_sound(word)
    if final is None:
        if after_consonant.endswith(after_vowel):
            return f"({after_consonant[: -len(after_vowel)]}){after_vowel}"
        return f"{after_consonant}({after_vowel})"
    if final == VOWEL or (final == RIEUL and after_consonant == "으" + after_vowel):
        return after_vowel
    return after_consonant


class _ParticleFormatter(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        if is_particle_spec(format_spec):
            text = str(value)
            return text + particle(text, format_spec)
        return str(super().format_field(value, format_spec))


_FORMATTER = _ParticleFormatter()


def fill(template: str, mapping: Mapping[str, Any]) -> str:
    """``template.format_map(mapping)`` with particle specs, and no doubled full stop after a value."""
    parts: list[str] = []
    for literal, field, spec, conversion in _FORMATTER.parse(template):
        if literal and parts:
            literal = _after_value("".join(parts), literal)
        if literal:
            parts.append(literal)
        if field is None:
            continue
        value, _ = _FORMATTER.get_field(field, (), mapping)
        value = _FORMATTER.convert_field(value, conversion)
        parts.append(_FORMATTER.format_field(value, spec or ""))
    return "".join(parts)


def _after_value(before: str, literal: str) -> str:
    """The literal that follows a value: its combined particle resolved, no second full stop.

    A combined form right after a value (``{name}이(가)``, ``{version}({library})을(를)``,
    ``"{value}"(으)로``) is chosen by the value; a parenthesis between them is skipped, as a
    Korean reader skips it.
    """
    if literal.startswith(".") and not literal.startswith("..") and before.endswith("."):
        return literal[1:]
    match = _COMBINED_AFTER_FIELD.match(literal)
    if match is None:
        return literal
    between = match.group(1) or ""
    word = before
    if between == ")" and "(" in before:
        word = before[: before.rfind("(")]
    chosen = particle(word, _COMBINED[match.group(2)])
    return between + chosen + literal[match.end() :]
