"""DirectML (Windows) and CoreML (macOS) as their real wheels ship them.

The data is resources/compat/directml_coreml.json (read from the real win_amd64 and macOS
wheels); core/readers/collect/ort_binaries.py checks a package folder against it. Neither provider can
run on the Linux machines this tool is tested on.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from fallback_doctor.core.platform.resource_files import RESOURCES

_RESOURCE = "compat/directml_coreml.json"


@cache
def facts() -> dict[str, Any]:
    """The whole data file."""
    text = RESOURCES.joinpath(_RESOURCE).read_text(encoding="utf-8")
    data = json.loads(text)
    assert isinstance(data, dict)
    return data
