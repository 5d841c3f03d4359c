"""Render the icon (fallback-doctor.svg) into the hicolor PNG sizes and a Windows .ico, with Qt.

``python packaging/desktop/make_icons.py OUT_DIR`` writes OUT_DIR/hicolor/<N>x<N>/apps/<id>.png,
OUT_DIR/hicolor/scalable/apps/<id>.svg and OUT_DIR/fallback-doctor.ico. Runs offscreen.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

APP_ID = "io.github.gpu_fallback_doctor.FallbackDoctor"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
SOURCE = Path(__file__).resolve().parent / "fallback-doctor.svg"


def render(out: Path) -> list[Path]:
    """Write every size; return the files written."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication([])
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        raise SystemExit(f"{SOURCE}: not a valid SVG")
    written: list[Path] = []
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        path = out / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(path), "PNG"):
            raise SystemExit(f"could not write {path}")
        written.append(path)
        if size == 256:
            ico = out / "fallback-doctor.ico"
            if image.save(str(ico), "ICO"):
                written.append(ico)
    scalable = out / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SOURCE, scalable)
    written.append(scalable)
    del app
    return written


if __name__ == "__main__":
    for item in render(Path(sys.argv[1] if len(sys.argv) > 1 else "build/icons")):
        print(item)
