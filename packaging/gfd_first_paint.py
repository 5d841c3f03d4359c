"""Open the wizard, wait for its first paint, save a picture of it, print one JSON line, quit.

The packaging check of the wizard, shipped in the frozen build: ``fallback-doctor --run-module
gfd_first_paint OUT.png`` (and ``python packaging/gfd_first_paint.py OUT.png`` for the
pip-installed tool). It prints ``{"paint_wall": <time.time() of the first paint>, "distinct":
<colours in the picture>, "title": ..., "page": ...}``: benchmarks/bench_package.py takes the start
to first window from ``paint_wall``, tests/packaging checks the first page really painted.
Offscreen unless QT_QPA_PLATFORM or a display says otherwise.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time


def main(argv: list[str]) -> int:
    """Show the wizard on the Python target, grab it after its first paint, print the facts."""
    out = argv[0] if argv else os.path.join(tempfile.gettempdir(), "gfd-first-paint.png")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from fallback_doctor.gui.app import make_application
    from PySide6.QtCore import QEvent, QObject, QSettings, QTimer

    app = make_application()
    from fallback_doctor.gui.wizard import DoctorWizard

    scratch = tempfile.TemporaryDirectory(prefix="gfd-paint-", ignore_cleanup_errors=True)
    settings = QSettings(os.path.join(scratch.name, "s.ini"), QSettings.Format.IniFormat)
    wizard = DoctorWizard({"kind": "python"}, settings=settings, lang="en")
    result: dict[str, object] = {}

    class Watch(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.Paint and "paint_wall" not in result:
                result["paint_wall"] = time.time()
                QTimer.singleShot(50, grab)
            return False

    def grab() -> None:
        image = wizard.grab().toImage()
        image.save(out, "PNG")
        step = max(1, image.width() // 64)
        colours = {
            image.pixel(x, y) for x in range(0, image.width(), step) for y in range(0, image.height(), step)
        }
        page = wizard.currentPage()
        result.update(
            distinct=len(colours),
            width=image.width(),
            height=image.height(),
            title=wizard.windowTitle(),
            page=page.title() if page is not None else None,
            picture=out,
        )
        app.quit()

    watch = Watch()
    for widget in [wizard, *wizard.findChildren(QObject)]:
        if hasattr(widget, "installEventFilter"):
            widget.installEventFilter(watch)
    wizard.show()
    QTimer.singleShot(20000, app.quit)
    app.exec()
    if hasattr(wizard, "shutdown"):
        wizard.shutdown()
    scratch.cleanup()
    print(json.dumps(result), flush=True)
    return 0 if "distinct" in result else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
