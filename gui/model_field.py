"""The CPU page's model field: the application's own .onnx model and its dynamic dimensions.

The wizard's form of ``--model FILE --dim NAME=VALUE``: a file (typed or chosen), and the values
of its dynamic dimensions as ``batch=16 seq=128``. What it holds goes into the wizard's probe
options (the CPU baseline and the GPU retry run the same model); the line below says what will
run, read from the model's signature (core, through the facade; nothing is run here), or why not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import language, t
from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)


def dims_from_text(text: str) -> tuple[dict[str, int], str | None]:
    """``"batch=16 seq=128"`` (spaces or commas between) -> ({"batch": 16, "seq": 128}, None);
    the first item that is not NAME=VALUE with a positive integer as the second part."""
    dims: dict[str, int] = {}
    for item in text.replace(",", " ").split():
        name, sep, value = item.rpartition("=")
        if not sep or not name or not value.isdigit() or int(value) < 1:
            return dims, item
        dims[name] = int(value)
    return dims, None


class ModelField(QWidget):
    """A model file with a browse button, its dimensions, and a line saying what will run."""

    def __init__(self, options: Callable[[], dict[str, Any]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._options = options
        self.path = QLineEdit(self)
        self.browse = QPushButton(self)
        self.dims = QLineEdit(self)
        self.path_label = QLabel(self)
        self.path_label.setBuddy(self.path)
        self.dims_label = QLabel(self)
        self.dims_label.setBuddy(self.dims)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.path_label, 0, 0)
        grid.addWidget(self.path, 0, 1)
        grid.addWidget(self.browse, 0, 2)
        grid.addWidget(self.dims_label, 1, 0)
        grid.addWidget(self.dims, 1, 1, 1, 2)
        grid.addWidget(self.note, 2, 1, 1, 2)
        self.path.editingFinished.connect(self.apply)
        self.dims.editingFinished.connect(self.apply)
        self.browse.clicked.connect(self._choose)
        self.load()
        self.describe()

    def retranslate(self) -> None:
        """Every word in the current language, and the line below anew."""
        self.path_label.setText(t("model.label"))
        self.path.setPlaceholderText(t("model.bundled"))
        self.path.setAccessibleName(t("model.label"))
        self.browse.setText(t("model.browse"))
        self.browse.setAccessibleName(t("model.browse"))
        self.dims_label.setText(t("model.dims"))
        self.dims.setPlaceholderText(t("model.dims_hint"))
        self.dims.setAccessibleName(t("model.dims"))
        self.describe()

    def load(self) -> None:
        """The fields from the probe options (``fallback-doctor gui --model FILE --dim ...``)."""
        options = self._options()
        self.path.setText(str(options.get("model") or ""))
        dims = options.get("dims") or {}
        self.dims.setText(" ".join(f"{name}={value}" for name, value in dims.items()))

    @Slot()
    def apply(self) -> None:
        """Put the fields into the probe options (the next CPU baseline and GPU retry run them)."""
        options = self._options()
        dims, bad = dims_from_text(self.dims.text())
        if bad is None:
            path = self.path.text().strip()
            for key, value in (("model", path), ("dims", dims)):
                if value:
                    options[key] = value
                else:
                    options.pop(key, None)
        self.describe()

    def describe(self) -> None:
        """The line below the fields: the model and each dimension's value and source, or why not."""
        dims, bad = dims_from_text(self.dims.text())
        if bad is not None:
            self.note.setText(t("model.bad_dims", item=bad))
            return
        choice = facade.model_choice(self.path.text().strip(), dims, language())
        if not choice["ok"]:
            self.note.setText(t("model.cannot", why=choice["text"]))
            return
        self.note.setText("\n".join(line for line in (choice["text"], choice["warning"]) if line))

    @Slot()
    def _choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, t("model.dialog"), self.path.text(), t("model.filter"))
        if path:
            self.path.setText(path)
            self.apply()
