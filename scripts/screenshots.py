"""Walk the wizard on a real X display (Xvfb) and save a screenshot of every page, in English and Korean.

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots]

Starts ``Xvfb :99`` (unless DISPLAY already names a running server and --no-xvfb is given),
runs the real diagnosis and test inference of this machine, and grabs each page with
``QWidget.grab()``. Page 6 is saved twice: as it is here (no NVIDIA driver: the graph area says
so), and with GPU readings replayed from a real recording (tests/data/gpu_series), labelled as
replayed. Korean needs a CJK font (Debian: fonts-noto-cjk).

A second set, ``bareun-*``, walks a Bareun-like installation built in a temporary folder by
tests/core/targets/bareun_layout.py (a configuration asking for the GPU, a CPU-only libPath
with onnxruntime-node's real library, a log with ONNX Runtime's real fallback line), so the
configuration and log pages show real content; it adds the bundle preview (export) and the
same bundle opened again (the "bundle from another machine" banner). ``hidpi-*`` is one page
taken with QT_SCALE_FACTOR=2 (in a child process: the factor is read once, at start).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RECORDING = ROOT / "tests" / "data" / "gpu_series" / "04-gtx1660ti-onnxruntime-cuda-yolov7.txt"
GPU_RUN = ROOT / "tests" / "data" / "gpu_run" / "h200-working.json"
NAMES = ("start", "config", "log", "stack", "cpu", "gpu", "diagnosis")


def start_xvfb(display: str) -> subprocess.Popen[bytes] | None:
    """Start Xvfb on ``display`` and wait for its socket; None when Xvfb is not installed."""
    if shutil.which("Xvfb") is None:
        return None
    process = subprocess.Popen(
        ["Xvfb", display, "-screen", "0", "2600x1800x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    socket = Path(f"/tmp/.X11-unix/X{display.lstrip(':')}")
    for _ in range(100):
        if socket.exists():
            break
        time.sleep(0.05)
    return process


def main() -> int:
    """Take the screenshots; print the files written."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    parser.add_argument("--display", default=":99")
    parser.add_argument("--no-xvfb", action="store_true")
    parser.add_argument("--only", choices=("python", "bareun", "hidpi"), help="take one set only")
    args = parser.parse_args()
    xvfb = None if args.no_xvfb else start_xvfb(args.display)
    if xvfb is not None:
        os.environ["DISPLAY"] = args.display
    os.environ["QT_QPA_PLATFORM"] = "xcb" if os.environ.get("DISPLAY") else "offscreen"
    if args.only != "hidpi":
        os.environ.pop("QT_SCALE_FACTOR", None)
    try:
        if args.only is None:
            status = _shoot(Path(args.out), "python") or _shoot(Path(args.out), "bareun")
            child = [sys.executable, __file__, "--out", args.out, "--only", "hidpi", "--no-xvfb"]
            env = {**os.environ, "QT_SCALE_FACTOR": "2"}
            return status or subprocess.run(child, env=env, check=False).returncode
        if args.only == "hidpi":
            os.environ["QT_SCALE_FACTOR"] = os.environ.get("QT_SCALE_FACTOR", "2")
        return _shoot(Path(args.out), args.only)
    finally:
        if xvfb is not None:
            xvfb.terminate()
            xvfb.wait(timeout=5)


def _close(wizard: Any) -> None:
    """Close a wizard the script opened: its diagnosis is not kept, so the "not saved" question
    (gui/leaving.py) is answered before it is asked."""
    wizard.ask_to_leave = lambda: "discard"
    wizard.close()


def _shoot(out: Path, which: str) -> int:
    from fallback_doctor.gui.app import make_application

    app = make_application()
    from fallback_doctor.core.readers.sampling.recordings import load_recording
    from fallback_doctor.core.readers.sampling.sources import ReplaySource
    from fallback_doctor.gui.wizard import DoctorWizard, Page
    from PySide6.QtCore import QSettings

    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def wait(condition, timeout: float = 180.0) -> None:  # type: ignore[no-untyped-def]
        end = time.monotonic() + timeout
        while time.monotonic() < end and not condition():
            app.processEvents()
            time.sleep(0.02)
        for _ in range(10):
            app.processEvents()
            time.sleep(0.02)

    def grab(wizard: DoctorWizard, name: str) -> None:
        wait(lambda: wizard.running is None)
        wizard.flush_rendering()
        path = out / name
        wizard.grab().save(str(path))
        written.append(path)

    if which == "bareun":
        return _shoot_bareun(out, app, wait, grab, written)
    if which == "hidpi":
        with tempfile.TemporaryDirectory() as settings_dir:
            settings = QSettings(os.path.join(settings_dir, "s.ini"), QSettings.Format.IniFormat)
            wizard = DoctorWizard({"kind": "python"}, settings=settings, lang="en")
            wizard.show()
            wait(lambda: not wizard.searching, 10)
            for _ in range(int(Page.STACK)):
                wizard.next()
                wait(lambda: wizard.running is None)
            wizard.pages[Page.STACK].select("cuda")
            grab(wizard, "hidpi-3-stack-en.png")
            wizard.shutdown()
            _close(wizard)
        _print(written)
        return 0
    with tempfile.TemporaryDirectory() as settings_dir:
        settings = QSettings(os.path.join(settings_dir, "s.ini"), QSettings.Format.IniFormat)
        options = {"runs": 10, "warmup": 2}
        wizard = DoctorWizard({"kind": "python"}, settings=settings, probe_options=options, lang="en")
        wizard.show()
        wait(lambda: not wizard.searching, 10)
        for lang in ("en", "ko"):
            wizard.switch_language(lang)
            while wizard.currentId() != Page.START:
                wizard.back()
            for number, name in enumerate(NAMES):
                if number:
                    wizard.next()
                if number == Page.STACK:
                    wizard.pages[Page.STACK].select("cuda")
                grab(wizard, f"{number}-{name}-{lang}.png")
        wizard.shutdown()
        _close(wizard)
        recording = load_recording(RECORDING)
        replay = DoctorWizard(
            {"kind": "python"},
            settings=settings,
            probe_options={"runs": 40, "warmup": 2},
            sample_source=lambda: ReplaySource(recording, speed=None),
            lang="en",
        )
        replay.show()
        wait(lambda: not replay.searching, 10)
        for lang in ("en", "ko"):
            replay.switch_language(lang)
            while replay.currentId() != Page.START:
                replay.back()
            for _ in range(int(Page.GPU)):
                replay.next()
                wait(lambda: replay.running is None)
            grab(replay, f"5-gpu-replayed-recording-{lang}.png")
        replay.shutdown()
        _close(replay)
        _shoot_gpu_run(out, settings_dir, wait, grab)
    _print(written)
    return 0


def _shoot_gpu_run(out: Path, base: str, wait, grab) -> None:  # type: ignore[no-untyped-def]
    """h200-*: a real GPU run (scripts/gpu-check.sh on an H200, tests/data/gpu_run/h200-working.json),
    exported as a bundle and opened as a technician receiving it would: the GPU and diagnosis pages.
    Not run on this machine: the document and its samples were recorded there."""
    import json

    from fallback_doctor.core import facade
    from fallback_doctor.core.bundle.export import export_bundle
    from fallback_doctor.core.bundle.preview import BundleOptions
    from fallback_doctor.gui.wizard import Page
    from PySide6.QtCore import QSettings

    document = json.loads(GPU_RUN.read_text(encoding="utf-8"))
    bundle = Path(base) / "h200-working.zip"
    created = str(document.get("created") or "")
    export_bundle(document, bundle, facade.bundle_members(document), BundleOptions(created=created or None))
    settings = QSettings(os.path.join(base, "h200.ini"), QSettings.Format.IniFormat)
    _walk_opened_bundle(bundle, settings, wait, grab, "h200", (Page.GPU, Page.DIAGNOSIS))


def _walk_opened_bundle(bundle: Path, settings, wait, grab, prefix: str, pages) -> None:  # type: ignore[no-untyped-def]
    """Open ``bundle`` as a technician receiving it would; in each language, page by page from the
    start, grab each of ``pages`` as ``{prefix}-{number}-{name}-{lang}.png``."""
    from fallback_doctor.gui.wizard import DoctorWizard, Page

    opened = DoctorWizard({"kind": "bundle", "bundle": str(bundle)}, settings=settings, lang="en")
    opened.show()
    wait(lambda: not opened.searching, 10)
    for lang in ("en", "ko"):
        opened.switch_language(lang)
        while opened.currentId() != Page.START:
            opened.back()
        for number, name in enumerate(NAMES):
            if number:
                opened.next()
                wait(lambda: opened.running is None)
            if number in pages:
                grab(opened, f"{prefix}-{number}-{name}-{lang}.png")
    opened.shutdown()
    _close(opened)


def _print(written: list[Path]) -> None:
    for path in written:
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def _shoot_bareun(out: Path, app, wait, grab, written: list[Path]) -> int:  # type: ignore[no-untyped-def]
    """The bareun-* set: a Bareun-like installation, the export preview, the bundle opened again."""
    sys.path.insert(0, str(ROOT / "tests" / "core" / "targets"))
    from bareun_layout import make_install
    from fallback_doctor.gui.wizard import DoctorWizard, Page
    from PySide6.QtCore import QSettings

    with tempfile.TemporaryDirectory() as base:
        root = make_install(Path(base))
        settings = QSettings(os.path.join(base, "s.ini"), QSettings.Format.IniFormat)
        wizard = DoctorWizard(
            {"kind": "bareun", "bareun_root": str(root)},
            settings=settings,
            probe_options={"runs": 10, "warmup": 2},
            lang="en",
        )
        wizard.show()
        wait(lambda: not wizard.searching, 10)
        bundle = Path(base) / "bareun-bundle.zip"
        for lang in ("en", "ko"):
            wizard.switch_language(lang)
            while wizard.currentId() != Page.START:
                wizard.back()
            for number, name in enumerate(NAMES):
                if number:
                    wizard.next()
                if number == Page.STACK:
                    wizard.pages[Page.STACK].select("onnxruntime")
                grab(wizard, f"bareun-{number}-{name}-{lang}.png")
            dialog = wizard.open_export_dialog()
            dialog.resize(1100, 720)
            wait(lambda d=dialog: d.preview is not None and d.save.isEnabled(), 60)
            names = [member.name for member in dialog.preview.members]
            config = next(m.name for m in dialog.preview.members if m.kind == "config")
            dialog.members.setCurrentRow(names.index(config))
            wait(lambda: True, 1)
            path = out / f"bareun-7-export-preview-{lang}.png"
            dialog.grab().save(str(path))
            written.append(path)
            if lang == "en":
                dialog.save_to(str(bundle))
                wait(lambda d=dialog: d.written is not None, 60)
            else:
                dialog.reject()
        wizard.shutdown()
        _close(wizard)
        # Every page shows the other machine's report.
        _walk_opened_bundle(bundle, settings, wait, grab, "bareun-8-bundle", tuple(Page))
    _print(written)
    return 0


if __name__ == "__main__":
    sys.exit(main())
