"""A log's ranked candidates, settled by the full diagnosis with the machine's facts.

ONNX Runtime's own output on each real broken stack is the log. From the text alone a missing
CUDA library has several known causes (absent, another major installed); the diagnosis on the
machine, given the same log with ``--log``, must settle on the stack's own cause and quote the
log's line for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import scenario_runs as runs
from fallback_doctor.core.readers.logs.diagnose_log import explain_text
from fallback_doctor.core.readers.logs.separators import separator

pytestmark = pytest.mark.scenario

SETTLED = ["s3_no_cuda", "s4_wheels_not_on_path", "s6_cuda12_build_cuda13_libs"]


@pytest.mark.parametrize("scenario_id", SETTLED)
def test_the_machine_settles_the_logs_candidates(diagnosis, ort, tmp_path_factory, scenario_id):
    sc = runs.SCENARIOS[scenario_id]
    own = ort(scenario_id)
    log_alone = explain_text(own.output)
    ranked = [candidate.cause for candidate in log_alone.causes]
    assert sc.cause in ranked[:3], (ranked, own.output[-1500:])
    assert all(separator(candidate.cause, "en") for candidate in log_alone.causes[:3])
    log = Path(tmp_path_factory.mktemp(scenario_id)) / "app.log"
    log.write_text(own.output, encoding="utf-8")
    diag = diagnosis(scenario_id, "--log", str(log))
    assert diag.doc["environment"]["log"]["causes"], diag.describe()
    quoted = [
        finding
        for finding in diag.findings
        if finding["cause"] == sc.cause
        and any(item["label"].startswith("log line") and item.get("line") for item in finding["evidence"])
    ]
    assert quoted, diag.describe()
    log_finding = [finding for finding in diag.findings if finding["id"] == "log.cause"]
    assert not log_finding or log_finding[0]["cause"] == sc.cause, diag.describe()
