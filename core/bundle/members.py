"""The bundle's members besides the report, all read from the one report document.

samples.csv is the test inference's sampled series (``inference.series``: GPU via NVML, the
probe's CPU via psutil); ``probe/<name>`` the end of each probe child's output
(``inference.probe_outputs``); the configuration and the logs the document names are read by
export's ``extras_from_document``. `diagnose --bundle` and the wizard's export both call this, so
a bundle holds the same files whoever made it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fallback_doctor.core.bundle.export import extras_from_document
from fallback_doctor.core.bundle.preview import ExtraMember


def probe_member_name(output: Mapping[str, object]) -> str:
    """A probe output's member name: the GPU retry's as the probe named it, the baseline's prefixed."""
    name = str(output.get("name") or "output.txt")
    return name if output.get("step") == "gpu_retry" else f"cpu_baseline.{name}"


def bundle_members(document: dict[str, Any]) -> list[ExtraMember]:
    """Configuration and logs, samples.csv, probe outputs: everything the document points at."""
    from fallback_doctor.core.readers.sampling.sampler import SamplingSeries

    extras = list(extras_from_document(document))
    inference = document.get("inference") or {}
    series = inference.get("series")
    if isinstance(series, dict) and series.get("samples"):
        csv_text = SamplingSeries.from_dict(series).to_csv()
        extras.append(
            ExtraMember("samples.csv", csv_text, "samples", "the sampler during the test inference")
        )
    for output in inference.get("probe_outputs") or ():
        step = "CPU baseline" if output.get("step") == "cpu_baseline" else "GPU retry"
        extras.append(
            ExtraMember(
                probe_member_name(output), str(output.get("text") or ""), "probe", f"the {step}'s probe"
            )
        )
    return extras
