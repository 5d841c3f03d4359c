"""The wizard's language; its words come from the catalogues (resources/texts/<lang>/labels/ui.json).

``t(key, **params)`` gives the label in the current language (``set_language``). The system locale
picks the language at start; the window has a menu of every catalogue language, each by its own
name (:func:`language_names`). Findings' words come from the report document, picked by the same
rule as the CLI's (core/views/text_report.py ``finding_text``).
"""

from __future__ import annotations

from fallback_doctor.core import facade

LANGUAGES = facade.LANGUAGES

_current = {"lang": "en"}


def system_language() -> str:
    """ "ko" when the locale is Korean, else "en" (the same rule as the CLI's, in core/language/texts.py)."""
    return facade.system_language()


def set_language(lang: str) -> None:
    """Switch the wizard's words (the caller re-renders the pages)."""
    _current["lang"] = lang if lang in LANGUAGES else "en"


def language_names() -> list[tuple[str, str]]:
    """(code, the language's own name) of every catalogue language, for the language menu (its code
    where its catalogue does not name it yet: not a second "English")."""
    english = facade.label("language.name", "en")
    named = [(lang, facade.label("language.name", lang)) for lang in LANGUAGES]
    return [(lang, name if lang == "en" or name != english else lang) for lang, name in named]


def language() -> str:
    """The current language's code ("en", "ko", or any other catalogue's)."""
    return _current["lang"]


def t(key: str, **params: object) -> str:
    """The label ``key`` in the current language, with ``params`` filled in."""
    return facade.label(key, _current["lang"], **params)


def has(key: str) -> bool:
    """Whether the catalog has the label ``key``."""
    return facade.has_label(key)
