"""Page 0, what to diagnose: each kind of target the core registers (a Bareun installation, a
Python application, a native application's library folder, a log), pasted log text, a bundle."""

from __future__ import annotations

import os
from typing import Any

from fallback_doctor.core import facade
from fallback_doctor.gui.i18n import t
from fallback_doctor.gui.page_base import (
    STATUS_COLOURS,
    DoctorWizard,
    Page,
    StepPage,
    plain_label,
)
from PySide6.QtCore import Slot
from PySide6.QtGui import QIntValidator
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
)


class StartPage(StepPage):
    """0. What to diagnose."""

    page_id = Page.START
    key = "start"

    def __init__(self, wizard: DoctorWizard) -> None:
        super().__init__(wizard)
        self.again.hide()
        self.status.hide()
        self.group = QButtonGroup(self)
        grid = QGridLayout()
        self.radios: dict[str, QRadioButton] = {}
        self.fields: dict[str, QLineEdit] = {}
        self.browse: dict[str, QPushButton] = {}
        self.profiles = {profile.kind: profile for profile in facade.wizard_profiles()}
        self.found_kind = next(
            (k for k, p in self.profiles.items() if facade.wizard_field(p).lists_found), None
        )
        self.fields_labels: dict[str, Any] = {}
        row = 0
        for kind in (*self.profiles, "paste", "bundle"):
            radio = QRadioButton(self)
            self.group.addButton(radio)
            self.radios[kind] = radio
            grid.addWidget(radio, row, 0, 1, 3)
            row += 1
            if kind == self.found_kind:
                self.found = QComboBox(self)
                self.found.setEditable(False)
                self.found_label = plain_label(self)
                self.found_label.setWordWrap(True)
                grid.addWidget(self.found_label, row, 1)
                grid.addWidget(self.found, row, 2)
                self._found_row = row
                self.found.currentIndexChanged.connect(self._on_found)
                row += 1
            if kind == "paste":
                self.paste = QPlainTextEdit(self)
                self.paste.setMaximumHeight(110)
                self.paste.setTabChangesFocus(True)
                self.paste.textChanged.connect(lambda: self.radios["paste"].setChecked(True))
                grid.addWidget(self.paste, row, 1, 1, 3)
                row += 1
                continue
            label = plain_label(self)
            edit = QLineEdit(self)
            edit.textEdited.connect(lambda _text, k=kind: self.radios[k].setChecked(True))
            label.setBuddy(edit)
            button = QPushButton(self)
            button.clicked.connect(lambda _checked=False, k=kind: self._on_browse(k))
            grid.addWidget(label, row, 1)
            grid.addWidget(edit, row, 2)
            grid.addWidget(button, row, 3)
            self.fields[kind] = edit
            self.browse[kind] = button
            self.fields_labels[kind] = label
            row += 1
        self.pid_label, self.pid = plain_label(self), QLineEdit(self)
        self.pid.setValidator(QIntValidator(1, 2**31 - 1, self.pid))
        self.pid_label.setBuddy(self.pid)
        grid.addWidget(self.pid_label, row, 0, 1, 2)
        grid.addWidget(self.pid, row, 2)
        row += 1
        self.env_label, self.env = plain_label(self), QPlainTextEdit(self)
        self.env.setTabChangesFocus(True)
        self.env.setFixedHeight(self.env.fontMetrics().lineSpacing() * 3 + 12)
        self.env_label.setBuddy(self.env)
        grid.addWidget(self.env_label, row, 0, 1, 2)
        grid.addWidget(self.env, row, 2)
        grid.setColumnStretch(2, 1)
        grid.setColumnMinimumWidth(0, 24)
        self.grid = grid
        self.body.addLayout(grid)
        self.problem = plain_label(self)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(f"color: {STATUS_COLOURS['error']};")
        self.body.addWidget(self.problem)
        self.body.addStretch(1)
        self.installations: list[str] = []

    def retranslate(self) -> None:
        """Labels of the choices."""
        super().retranslate()
        for kind, radio in self.radios.items():
            radio.setText(t(f"start.{kind}"))
            radio.setAccessibleName(t(f"start.{kind}"))
        names = {kind: facade.wizard_field(profile).label_key for kind, profile in self.profiles.items()}
        for kind, key in {**names, "bundle": "start.bundlefile"}.items():
            self.fields_labels[kind].setText(t(key) + ":")
            self.fields[kind].setAccessibleName(t(key))
            self.browse[kind].setText(t("start.browse"))
            self.browse[kind].setAccessibleName(f"{t('start.browse')} {t(key)}")
        self.paste.setPlaceholderText(t("start.paste.hint"))
        self.pid_label.setText(t("start.pid") + ":")
        self.pid.setAccessibleName(t("start.pid"))
        self.pid.setPlaceholderText(t("start.pid.hint"))
        self.env_label.setText(t("start.env") + ":")
        self.env.setAccessibleName(t("start.env"))
        self.env.setPlaceholderText(t("start.env.hint"))
        self.paste.setAccessibleName(t("start.paste"))
        self.found.setAccessibleName(t("start.bareun.found"))
        self.show_installations(self.installations, searching=self.doctor.searching)

    def show_installations(self, roots: list[str], searching: bool = False) -> None:
        """The installations found on this machine (Bareun's), first in the list."""
        self.installations = roots
        self.found.blockSignals(True)
        self.found.clear()
        for root in roots:
            self.found.addItem(root)
        self.found.blockSignals(False)
        self.found.setVisible(bool(roots))
        # Beside the list when there is one; else a sentence across the whole row (in the label's
        # column alone it wrapped into a narrow tower of five lines).
        self.grid.removeWidget(self.found_label)
        self.grid.addWidget(self.found_label, self._found_row, 1, 1, 1 if roots else 3)
        if searching:
            self.found_label.setText(t("start.bareun.searching"))
        elif roots:
            self.found_label.setText(t("start.bareun.found"))
            if self.found_kind and not self.fields[self.found_kind].text():
                self.fields[self.found_kind].setText(roots[0])
        else:
            self.found_label.setText(t("start.bareun.none"))

    @Slot(int)
    def _on_found(self, index: int) -> None:
        if self.found_kind and 0 <= index < len(self.installations):
            self.fields[self.found_kind].setText(self.installations[index])
            self.radios[self.found_kind].setChecked(True)

    def _on_browse(self, kind: str) -> None:
        current = self.fields[kind].text()
        field = self.profiles[kind].wizard if kind in self.profiles else None
        if field is None:
            path, _ = QFileDialog.getOpenFileName(self, t("start.bundlefile"), current, "Bundle (*.zip)")
        elif field.picks == "folder":
            path = QFileDialog.getExistingDirectory(self, t(field.label_key), current or "/")
        else:
            path, _ = QFileDialog.getOpenFileName(self, t(field.label_key), current)
        if path:
            self.fields[kind].setText(path)
            self.radios[kind].setChecked(True)

    def load(self, target: dict[str, Any]) -> None:
        """Fill the page from a target (the command line or the last one remembered)."""
        kind = target.get("kind") or "auto"
        for name, profile in self.profiles.items():
            value = next(
                (target[key] for key in facade.wizard_field(profile).fills_from if target.get(key)), None
            )
            if value:
                self.fields[name].setText(value[0] if isinstance(value, list) else str(value))
        if target.get("bundle"):
            self.fields["bundle"].setText(target["bundle"])
        choice: str | None = kind if kind in self.radios and kind != "paste" else None
        if choice is None:
            found = self.found_kind and self.fields[self.found_kind].text()
            choice = self.found_kind if found and self.found_kind else "python"
        self.radios[choice].setChecked(True)
        self.pid.setText(str(target["pid"]) if target.get("pid") else "")
        self.env.setPlainText(str(target.get("start_env") or ""))
        self.pending_config = target.get("config")

    def target(self) -> tuple[dict[str, Any] | None, str | None]:
        """The chosen target with the application's start-up environment, or a problem in words."""
        chosen, problem = self._chosen()
        env = self.env.toPlainText().strip()
        if chosen is not None and env and chosen.get("kind") not in ("log", "bundle"):
            chosen = {**chosen, "start_env": env}  # core/flow/step_child.py start_environment
        return chosen, problem

    def _chosen(self) -> tuple[dict[str, object] | None, str | None]:
        """The chosen target, or a problem in words."""
        chosen = next((k for k, r in self.radios.items() if r.isChecked()), "python")
        # The running server (its own interpreter, environment and libraries:
        # core/readers/targets/process.py).
        pid = int(self.pid.text()) if self.pid.text().isdigit() else None
        if chosen == "paste":
            text = self.paste.toPlainText().strip()
            if not text:
                return None, t("start.missing", what=t("start.paste"))
            return {"kind": "log", "log_text": text}, None
        value = self.fields[chosen].text().strip()
        given = {"pid": pid, "config": getattr(self, "pending_config", None)}
        profile = self.profiles.get(chosen)
        if not value:
            if profile is not None and facade.wizard_field(profile).optional:
                return facade.wizard_target(chosen, "", given), None
            return None, t("start.missing", what=self.fields_labels[chosen].text().rstrip(":"))
        value = os.path.expanduser(value)
        if not os.path.exists(value):
            return None, t("start.not_found", path=value)
        if profile is not None:
            return facade.wizard_target(chosen, value, given), None
        return {"kind": "bundle", "bundle": value}, None

    def initializePage(self) -> None:  # noqa: N802
        """Nothing runs on the start page."""
        self.problem.setText("")

    def validatePage(self) -> bool:  # noqa: N802
        """Take the target; the diagnosis starts as the next page opens."""
        target, problem = self.target()
        if target is None:
            self.problem.setText(problem or "")
            return False
        self.problem.setText("")
        self.doctor.set_target(target)
        return True
