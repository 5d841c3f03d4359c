"""The fleet's picture from its host rows: hosts by verdict, by first cause, by stack combination.

Pure: rows in, a serialisable summary out (``summary_document``), rendered as text and HTML by
core/fleet/render.py. Hosts with the same first cause (the same finding id) share one fix, so
they are one group: "14 hosts: CUDA 13 libraries are installed but the loader cannot find them".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fallback_doctor import __version__
from fallback_doctor.core.fleet.hosts import HostRow

SCHEMA = "gpu-fallback-doctor/fleet-summary"
SCHEMA_VERSION = 1

CATEGORY_ORDER = (
    "gpu_unusable",
    "gpu_at_risk",
    "unreachable",
    "tool_failed",
    "refused",
    "no_problem_found",
    "cpu_by_configuration",
    "gpu_verified",
)
"""Worst first: the order the summary lists verdicts in."""

HEALTHY = frozenset({"gpu_verified", "no_problem_found", "cpu_by_configuration"})


@dataclass(frozen=True)
class CauseGroup:
    """Hosts whose first cause is the same finding: one fix for all of them."""

    finding: str
    cause: str
    layer: str
    title: str
    fix: str
    hosts: tuple[str, ...]
    text: dict[str, Any] = field(default_factory=dict)
    """The finding's key and parameters (its words in the reader's language, core/language/texts.py)."""


@dataclass(frozen=True)
class ComboGroup:
    """Hosts with the same ONNX Runtime / CUDA / cuDNN / driver combination, and how it fared."""

    label: str
    onnxruntime: str | None
    cuda: str | None
    cudnn: str | None
    driver: str | None
    hosts: tuple[str, ...]
    verdicts: dict[str, int]
    status: str
    """works (a test inference ran on the GPU on every host with it), broken (the GPU is
    unusable on every host), mixed, or unproven (static checks only, or warnings)."""


def _sort_key(category: str) -> int:
    return CATEGORY_ORDER.index(category) if category in CATEGORY_ORDER else len(CATEGORY_ORDER)


def by_category(rows: Iterable[HostRow]) -> dict[str, tuple[str, ...]]:
    """Host names per verdict (or per state for hosts not diagnosed), worst first."""
    groups: dict[str, list[str]] = {}
    for row in rows:
        groups.setdefault(row.category, []).append(row.host)
    return {key: tuple(groups[key]) for key in sorted(groups, key=_sort_key)}


def cause_groups(rows: Iterable[HostRow]) -> tuple[CauseGroup, ...]:
    """Diagnosed hosts grouped by their first cause, the largest group first."""
    members: dict[str, list[HostRow]] = {}
    for row in rows:
        if row.state == "diagnosed" and row.first_cause is not None:
            members.setdefault(row.first_cause.finding, []).append(row)
    groups = []
    for finding, listed in members.items():
        titles = Counter(row.first_cause.title for row in listed if row.first_cause)
        first = listed[0].first_cause
        assert first is not None
        groups.append(
            CauseGroup(
                finding=finding,
                cause=first.cause,
                layer=first.layer,
                title=titles.most_common(1)[0][0],
                fix=first.fix,
                hosts=tuple(row.host for row in listed),
                text=first.text,
            )
        )
    groups.sort(key=lambda group: (-len(group.hosts), group.finding))
    return tuple(groups)


def _combo_status(verdicts: Counter[str], total: int) -> str:
    verified = verdicts.get("gpu_verified", 0)
    unusable = verdicts.get("gpu_unusable", 0)
    if verified == total:
        return "works"
    if unusable == total:
        return "broken"
    if verified and unusable:
        return "mixed"
    return "unproven"


def combo_groups(rows: Iterable[HostRow]) -> tuple[ComboGroup, ...]:
    """The stack combinations seen on diagnosed hosts and which of them work, most hosts first."""
    members: dict[str, list[HostRow]] = {}
    for row in rows:
        if row.state == "diagnosed" and row.stack is not None:
            members.setdefault(row.stack.label(), []).append(row)
    groups = []
    for label, listed in members.items():
        stack = listed[0].stack
        assert stack is not None
        verdicts = Counter(row.verdict or "unknown" for row in listed)
        groups.append(
            ComboGroup(
                label=label,
                onnxruntime=stack.onnxruntime,
                cuda=stack.cuda,
                cudnn=stack.cudnn,
                driver=stack.driver,
                hosts=tuple(row.host for row in listed),
                verdicts=dict(sorted(verdicts.items(), key=lambda item: _sort_key(item[0]))),
                status=_combo_status(verdicts, len(listed)),
            )
        )
    groups.sort(key=lambda group: (-len(group.hosts), group.label))
    return tuple(groups)


def wizard_command(bundle: str) -> str:
    """The command that opens one host's bundle in the wizard."""
    import shlex

    return f"fallback-doctor gui --bundle {shlex.quote(bundle)}"


def _row_json(row: HostRow) -> dict[str, object]:
    cause = row.first_cause
    return {
        "host": row.host,
        "state": row.state,
        "category": row.category,
        "verdict": row.verdict,
        "first_cause": None
        if cause is None
        else {
            "cause": cause.cause,
            "finding": cause.finding,
            "title": cause.title,
            "layer": cause.layer,
            "severity": cause.severity,
            "fix": cause.fix,
            "text": cause.text,
        },
        "stack": None if row.stack is None else {**row.stack.__dict__, "label": row.stack.label()},
        "target": row.target,
        "quick": row.quick,
        "gpus": list(row.gpus),
        "sees_gpu": row.sees_gpu,
        "created": row.created,
        "rc": row.rc,
        "message": row.message,
        "bundle": row.bundle,
        "identity": row.identity,
        "files": list(row.files),
        "open_in_wizard": wizard_command(row.bundle) if row.bundle else None,
    }


def summary_document(rows: Sequence[HostRow], created: str, folder: str) -> dict[str, object]:
    """The fleet summary as one versioned JSON document (what ``fleet-summary --json`` prints)."""
    categories = by_category(rows)
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "tool_version": __version__,
        "created": created,
        "folder": folder,
        "hosts_total": len(rows),
        "hosts_healthy": sum(1 for row in rows if row.category in HEALTHY),
        "hosts_without_gpu": [row.host for row in rows if row.state == "diagnosed" and row.sees_gpu is False],
        "by_verdict": {key: list(hosts) for key, hosts in categories.items()},
        "by_first_cause": [
            {**group.__dict__, "hosts": list(group.hosts), "count": len(group.hosts)}
            for group in cause_groups(rows)
        ],
        "stack_combinations": [
            {**group.__dict__, "hosts": list(group.hosts), "count": len(group.hosts)}
            for group in combo_groups(rows)
        ],
        "hosts": [_row_json(row) for row in rows],
    }


def exit_code(rows: Sequence[HostRow]) -> int:
    """0 when every host is healthy (or on the CPU on purpose), 1 when any is not."""
    return 0 if rows and all(row.category in HEALTHY for row in rows) else 1
