"""report.html on its own, for a technician who wants to hand over the page rather than the zip:
the very member a bundle would hold (redacted the same way), written beside nothing else.

By hand: ``unzip -p BUNDLE.zip report.html > report.html``.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any


class ReportPathError(OSError):
    """The path given for report.html cannot take it (a folder, a device, a file of another kind)."""


def _check_destination(path: Path) -> None:
    """Refuse a destination that is not a new file or an earlier .html page."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode) or path.suffix.lower() not in (".html", ".htm"):
        raise ReportPathError(f"{path}: already there and not an HTML page; choose another name")


def save_report_html(document: dict[str, Any], path: str, lang: str) -> str:
    """Write the bundle's report.html for ``document`` to ``path`` (replacing an earlier page there
    only: the save dialog has asked); returns the path written."""
    from fallback_doctor.core.bundle.export import prepare_bundle
    from fallback_doctor.core.bundle.members import bundle_members
    from fallback_doctor.core.bundle.preview import BundleOptions

    target = Path(path)
    _check_destination(target)
    preview = prepare_bundle(document, bundle_members(document), BundleOptions(lang=lang))
    page = preview.member("report.html").redacted
    handle, temporary = tempfile.mkstemp(prefix=".report-", suffix=".html", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(page)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return str(target)
