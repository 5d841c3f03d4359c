"""packaging/systemd and packaging/prometheus: the unit's command really runs the check and writes
the textfile, systemd accepts the units, and the alert rules use only metrics the textfile has."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import scenario_stacks as stacks
from fleet_hosts import ROOT, bareun_host
from servers import loader

SYSTEMD = ROOT / "packaging" / "systemd"
ALERTS = ROOT / "packaging" / "prometheus" / "alerts.yml"
TOOL = f"{sys.executable} -m fallback_doctor"

parser = pytest.importorskip("prometheus_client.parser", reason="prometheus_client is in the test extras")
yaml = pytest.importorskip("yaml", reason="PyYAML comes with ansible-core (test extras)")


def _exec_start(tool: str, args: str, textfile: Path) -> list[str]:
    """The service's ExecStart as systemd runs it: $VAR split into words, ${VAR} kept as one."""
    text = (SYSTEMD / "fallback-doctor-check.service").read_text(encoding="utf-8")
    line = next(item for item in text.splitlines() if item.startswith("ExecStart="))
    words = shlex.split(line.removeprefix("ExecStart="))
    assert words[0] == "/usr/bin/fallback-doctor"
    argv = shlex.split(tool)
    for word in words[1:]:
        if word == "$FALLBACK_DOCTOR_CHECK_ARGS":
            argv += args.split()
        else:
            argv.append(word.replace("${FALLBACK_DOCTOR_TEXTFILE}", str(textfile)))
    return argv


@pytest.mark.scenario
def test_the_service_command_checks_a_real_server_and_writes_a_textfile_the_alerts_can_read(
    tmp_path: Path,
) -> None:
    root = Path(bareun_host(tmp_path / "install", lib="cpu")["fallback_doctor_bareun_root"])
    textfile = tmp_path / "node-exporter" / "fallback_doctor.prom"
    textfile.parent.mkdir()
    argv = _exec_start(TOOL, f"--bareun-root {root}", textfile)
    with loader([root / "lib" / "libonnxruntime.so.1"], tmp_path / "server"):
        proc = subprocess.run(
            argv, capture_output=True, text=True, env=stacks.clean_env(), timeout=120, check=False
        )
    assert proc.returncode == 2, proc.stdout + proc.stderr  # CRITICAL: SuccessExitStatus lists it
    assert "SuccessExitStatus=1 2 3" in (SYSTEMD / "fallback-doctor-check.service").read_text()
    exposed = {family.name for family in parser.text_string_to_metric_families(textfile.read_text())}
    rules = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))["groups"][0]["rules"]
    assert len(rules) >= 3
    for rule in rules:
        used = set(re.findall(r"\bfallback_doctor_\w+", rule["expr"]))
        assert used and used <= exposed, (rule["alert"], used - exposed)
        assert rule["labels"]["severity"] in ("critical", "warning")


def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    tool = Path(sys.executable).with_name("fallback-doctor")
    unit = (
        (SYSTEMD / "fallback-doctor-check.service").read_text().replace("/usr/bin/fallback-doctor", str(tool))
    )
    (tmp_path / "fallback-doctor-check.service").write_text(unit)
    shutil.copy(SYSTEMD / "fallback-doctor-check.timer", tmp_path)
    proc = subprocess.run(
        [analyze, "verify", "--man=no", *(str(p) for p in sorted(tmp_path.iterdir()))],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
