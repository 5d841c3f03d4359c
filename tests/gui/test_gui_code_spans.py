"""A finding's `code spans` show as code on the diagnosis page, not as backticks a person reads
("How to verify: `ls -l …/lib/*onnxruntime*` lists …" in the retaken screenshot)."""

from __future__ import annotations

import pytest
from fallback_doctor.gui.page_html import with_code
from PySide6.QtGui import QTextDocument

pytestmark = pytest.mark.gui


def _shown(html: str) -> QTextDocument:
    document = QTextDocument()
    document.setHtml(html)
    return document


def test_a_code_span_is_code_and_its_backticks_are_gone(qapp) -> None:  # type: ignore[no-untyped-def]
    html = with_code("`ls -l /opt/b/lib/*onnxruntime*` lists <libonnxruntime_providers_cuda.so>")
    document = _shown(html)
    assert document.toPlainText() == "ls -l /opt/b/lib/*onnxruntime* lists <libonnxruntime_providers_cuda.so>"
    fragments = [it.fragment() for it in document.begin()]
    code = [f.text() for f in fragments if f.charFormat().fontFamilies()]
    assert code == ["ls -l /opt/b/lib/*onnxruntime*"]


def test_an_unpaired_backtick_is_shown_as_written(qapp) -> None:  # type: ignore[no-untyped-def]
    assert _shown(with_code("a ` b <i>")).toPlainText() == "a ` b <i>"
