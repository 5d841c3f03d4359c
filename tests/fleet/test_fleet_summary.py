"""fleet-summary over real bundles (exported from a real quick diagnosis of this interpreter), a
tampered one, a file that is no zip, and the status files the playbook writes."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from fallback_doctor.core.bundle.export import export_bundle
from fallback_doctor.core.bundle.preview import BundleOptions
from fallback_doctor.core.fleet import fields
from fallback_doctor.core.fleet.hosts import read_fleet
from fallback_doctor.core.fleet.render import render_html, render_text
from fallback_doctor.core.fleet.summary import summary_document
from hypothesis import given, settings
from hypothesis import strategies as st

HOSTILE = '<img src=x onerror="alert(1)"> & </td><script>alert(2)</script>'


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    from fallback_doctor.core.flow.diagnosis import DiagnoseRequest, diagnose, diagnosis_document
    from fallback_doctor.core.readers.collect.run import CollectRequest

    diagnosis = diagnose(DiagnoseRequest(collect=CollectRequest(python=sys.executable), quick=True))
    return diagnosis_document(diagnosis)


def _hostile(document: dict[str, Any]) -> dict[str, Any]:
    """The same document whose first finding is an error with a title that is markup."""
    changed = copy.deepcopy(document)
    finding = {
        "id": "cuda.runtime_not_on_loader_path",
        "cause": "cuda_runtime_missing",
        "layer": "cuda",
        "severity": "error",
        "title": HOSTILE,
        "detail": HOSTILE,
        "evidence": [],
        "remediation": None,
        "texts": {},
    }
    changed["findings"] = [finding, *changed["findings"]]
    changed["verdict"] = "gpu_unusable"
    return changed


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, document: dict[str, Any]) -> Path:
    base = tmp_path_factory.mktemp("fleet")
    mappings = base.parent / f"{base.name}-mappings"
    options = BundleOptions(lang="en")
    for name, doc in (("web-1", _hostile(document)), ("web-2", _hostile(document)), ("db-1", document)):
        export_bundle(doc, base / f"{name}.zip", options=options, mapping_directory=mappings)
    # web-3: a bundle whose report was changed after export (the manifest's sha256 no longer matches)
    with zipfile.ZipFile(base / "web-1.zip") as source, zipfile.ZipFile(base / "web-3.zip", "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "report.json":
                data = data.replace(b"gpu_unusable", b"gpu_verified")
            target.writestr(item, data)
    (base / "junk.zip").write_bytes(b"this is not a zip file")
    status = {"schema": "gpu-fallback-doctor/fleet-host", "schema_version": 1, "rc": None, "bundle": None}
    (base / "gone.status.json").write_text(
        json.dumps({**status, "host": "gone", "state": "unreachable", "message": "ssh: connection refused"})
    )
    (base / "db-1.status.json").write_text(
        json.dumps({**status, "host": "db-1", "state": "diagnosed", "rc": 0, "bundle": "db-1.zip"})
    )
    (base / "odd.status.json").write_text("{not json")
    return base


def test_rows_verify_every_bundle_and_keep_the_hosts_without_one(
    folder: Path, document: dict[str, Any]
) -> None:
    rows = {row.host: row for row in read_fleet(folder)}
    assert set(rows) == {"web-1", "web-2", "web-3", "db-1", "junk", "gone", "odd"}
    assert rows["web-1"].state == rows["web-2"].state == "diagnosed"
    assert rows["db-1"].state == "diagnosed" and rows["db-1"].rc == 0
    assert rows["db-1"].verdict == document["verdict"]
    assert rows["web-3"].state == "refused" and "sha256" in (rows["web-3"].message or "")
    assert rows["junk"].state == "refused" and "junk.zip" in (rows["junk"].message or "")
    assert rows["gone"].state == "unreachable" and rows["gone"].message == "ssh: connection refused"
    assert rows["odd"].state == "tool_failed" and "unreadable status file" in (rows["odd"].message or "")


def test_hosts_with_the_same_first_cause_are_one_group(folder: Path) -> None:
    summary = summary_document(read_fleet(folder), "now", str(folder))
    first = summary["by_first_cause"][0]
    assert first["finding"] == "cuda.runtime_not_on_loader_path"
    assert first["hosts"] == ["web-1", "web-2"] and first["count"] == 2
    assert summary["by_verdict"]["refused"] == ["junk", "web-3"]
    assert summary["by_verdict"]["unreachable"] == ["gone"]
    assert next(iter(summary["by_verdict"])) == "gpu_unusable"  # the worst first
    assert summary["hosts_total"] == 7
    text = render_text(summary)
    assert "2 hosts: " + HOSTILE in text


def test_the_page_escapes_what_the_bundles_say_and_loads_nothing(folder: Path) -> None:
    page = render_html(summary_document(read_fleet(folder), "now", str(folder)), "ko")
    assert "<script>" not in page and "<img" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    assert "default-src 'none'" in page and 'src="http' not in page and "href=" not in page
    assert f"fallback-doctor gui --bundle {folder.resolve() / 'web-1.zip'}" in page
    assert "첫 번째 원인이 같은 호스트" in page


def test_the_command_line_saves_the_three_forms_and_exits_1_for_a_sick_fleet(
    folder: Path, tmp_path: Path
) -> None:
    copy_of = tmp_path / "fleet"
    shutil.copytree(folder, copy_of)
    command = [sys.executable, "-m", "fallback_doctor", "fleet-summary", str(copy_of), "--save", "--json"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["schema"] == "gpu-fallback-doctor/fleet-summary"
    for name in ("fleet-summary.txt", "fleet-summary.json", "fleet-summary.html"):
        assert (copy_of / name).stat().st_size > 0
    missing = subprocess.run(
        [*command[:4], str(tmp_path / "nothing")], capture_output=True, text=True, check=False
    )
    assert missing.returncode == 2 and "not a folder" in missing.stderr


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=30,
)
_KEYS = st.sampled_from(["verdict", "findings", "environment", "target", "quick", "created"])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_KEYS, _JSON, max_size=6), st.dictionaries(st.sampled_from(
    ["native", "driver", "onnxruntime", "target"]), _JSON, max_size=4))  # fmt: skip
def test_the_accessors_never_raise_on_a_document_of_any_shape(
    top: dict[str, Any], environment: dict[str, Any]
) -> None:
    document = {**top, "environment": environment}
    fields.first_cause(document)
    assert isinstance(fields.stack_combo(document).label(), str)
    fields.gpu_names(document)
    fields.target_kind(document)
    assert isinstance(fields.verdict(document), str)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300) | _JSON.map(lambda value: json.dumps(value).encode()))
def test_a_status_file_of_any_content_is_a_row_never_an_error(tmp_path_factory: Any, content: bytes) -> None:
    folder = tmp_path_factory.mktemp("status")
    (folder / "h.status.json").write_bytes(content)
    [row] = read_fleet(folder)
    assert row.state in ("unreachable", "tool_failed") and row.host


def test_a_combination_works_only_when_every_host_with_it_ran_on_the_gpu() -> None:
    from fallback_doctor.core.fleet.fields import StackCombo
    from fallback_doctor.core.fleet.hosts import HostRow
    from fallback_doctor.core.fleet.summary import combo_groups

    good = StackCombo("onnxruntime-gpu 1.23.2 (CUDA 12.2 build)", "12.9", "9.13.0", "580.95.05")
    old = StackCombo("onnxruntime-gpu 1.31.1 (CUDA 13.0 build)", "13.0", "9.13.0", "550.54.15")
    rows = [
        HostRow("a", "diagnosed", "gpu_verified", stack=good),
        HostRow("b", "diagnosed", "gpu_verified", stack=good),
        HostRow("c", "diagnosed", "gpu_unusable", stack=old),
        HostRow("d", "diagnosed", "gpu_verified", stack=old),
        HostRow("e", "unreachable"),
    ]
    groups = {group.driver: group for group in combo_groups(rows)}
    assert groups["580.95.05"].status == "works" and groups["580.95.05"].hosts == ("a", "b")
    assert groups["550.54.15"].status == "mixed"
    assert groups["550.54.15"].verdicts == {"gpu_unusable": 1, "gpu_verified": 1}
    assert "driver 580.95.05" in groups["580.95.05"].label
