"""Our loader resolution against the real loader, in every scenario environment.

The diagnosis document's ``environment.libraries.reports`` says, for each provider library,
where every needed library would be loaded from (or that it would not be found). ``ldd`` runs
ld.so itself in trace mode with the same LD_LIBRARY_PATH: both must agree on every soname the
loader resolves at load time (libraries ONNX Runtime opens lazily are not in ``ldd``'s tree).
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import scenario_runs as runs
import scenario_stacks as stacks

pytestmark = pytest.mark.scenario

#: Scenarios whose ONNX Runtime build has the CUDA provider (in s2 the GPU package's provider
#: libraries are left on disk, but the binding in effect is the CPU build's: nothing to resolve).
GPU_SCENARIOS = [sid for sid, sc in runs.SCENARIOS.items() if sc.stack not in ("cpu-only", "gpu-and-cpu")]


def _reports(diag: runs.Diagnosis) -> list[dict[str, Any]]:
    libs = diag.doc.get("environment", {}).get("libraries") or {}
    return list(libs.get("reports") or [])


@pytest.mark.parametrize("scenario_id", GPU_SCENARIOS)
def test_resolutions_agree_with_ldd(stack, diagnosis, scenario_id):
    sc = runs.SCENARIOS[scenario_id]
    diag = diagnosis(scenario_id)
    reports = _reports(diag)
    assert reports, f"no loader reports in the snapshot\n{diag.describe()}"
    compared = 0
    disagreements = []
    for report in reports:
        truth = stacks.ldd_resolutions(report["root"], sc.env())
        for res in report["resolutions"]:
            if res.get("lazy") or res["name"] not in truth:
                continue
            ours = os.path.realpath(res["path"]) if res.get("path") else None
            theirs = truth[res["name"]]
            compared += 1
            if ours != theirs:
                disagreements.append(
                    f"{res['name']} (needed by {os.path.basename(res['needed_by'])}): "
                    f"ours {ours} via {res.get('via')}, ld.so {theirs}"
                )
    assert compared >= 5
    assert not disagreements, "\n".join(disagreements)


@pytest.mark.parametrize("scenario_id", GPU_SCENARIOS)
def test_every_unresolved_library_is_in_a_finding(stack, diagnosis, scenario_id):
    """What ld.so cannot find is named by some finding (the driver's by driver_missing)."""
    sc = runs.SCENARIOS[scenario_id]
    diag = diagnosis(scenario_id)
    text = "\n".join(runs.finding_text(f) for f in diag.findings)
    for provider in ("cuda", "tensorrt"):
        lib = stacks.provider_lib(stack(sc.stack), provider)
        for name in stacks.ldd_not_found(lib, sc.env()):
            assert name in text, f"{name} ({provider} provider) unnamed\n{diag.describe()}"


def test_same_soname_from_another_cuda_major_is_flagged(stack, diagnosis):
    sc = runs.SCENARIOS["s6_cuda12_build_cuda13_libs"]
    truth = stacks.ldd_resolutions(stacks.provider_lib(stack(sc.stack)), sc.env())
    # The real loader takes CUDA 13's libcurand.so.10 for this CUDA 12 build ...
    assert "/nvidia/cu13/lib/" in (truth["libcurand.so.10"] or "")
    # ... and CUDA 13's runtime comes along with it, beside the CUDA 12 runtime the build needs.
    assert "/nvidia/cu13/lib/" in (truth["libcudart.so.13"] or "")
    diag = diagnosis(sc.id)
    cuda_texts = "\n".join(runs.finding_text(f) for f in diag.findings if f["layer"] == "cuda")
    assert "libcurand.so.10" in cuda_texts, diag.describe()
    # ... under the major mismatch, with the CUDA 12 cuRAND in its fix, and the CUDA 13 runtime
    # it pulls in is no need of the build: nothing says CUDA 12's libcudart.so.13 is missing.
    mismatch = "\n".join(runs.finding_text(f) for f in diag.with_cause("cuda_major_mismatch"))
    assert "libcurand.so.10" in mismatch, diag.describe()
    remedy = "\n".join(runs.remediation_text(f) for f in diag.with_cause("cuda_major_mismatch"))
    assert "nvidia-curand-cu12" in remedy, diag.describe()
    assert not diag.with_cause("cuda_runtime_missing"), diag.describe()
