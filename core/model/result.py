"""The result model: findings, their evidence and remediation (frozen, serialisable)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

TRIED_LABEL = "tried here"
"""The evidence label of what the test inference tried for a finding (core/readers/inference/tried.py; one
per finding, a later GPU retry replaces it). Here, so the report reads it without the inference."""


class Severity(StrEnum):
    """How much a finding matters for the GPU path."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


SEVERITY_ORDER: tuple[Severity, ...] = (Severity.ERROR, Severity.WARNING, Severity.INFO)


class Layer(StrEnum):
    """What a support technician fixes; ranked lowest broken layer first (after config)."""

    CONFIG = "config"
    DRIVER = "driver"
    DEVICE = "device"
    CUDA = "cuda"
    CUDNN = "cudnn"
    TENSORRT = "tensorrt"
    PACKAGE = "package"
    LOADER = "loader"
    RESOURCES = "resources"
    PROBE = "probe"
    UNKNOWN = "unknown"


LAYER_ORDER: tuple[Layer, ...] = tuple(Layer)


@dataclass(frozen=True)
class Words:
    """Words of the evidence catalogue (resources/texts/evidence/): a key and its parameters, put
    into words in the language a document is shown in. A parameter is data shown as written (a
    path, a version, a system's own message) or itself ``Words``."""

    id: str
    params: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Evidence:
    """One thing we saw: a value, a path, or a quoted line (with file and line number).

    ``label``, ``value`` and ``source`` are the English words (kept in the JSON document for
    machine readers); ``label_id``, ``value_id`` and ``source_id`` are the catalogue's keys
    they were made from with ``params`` (core/language/evidence_text.py ``said``), so that a renderer shows
    them in its language. A value (or source) without a key is data, shown as written."""

    label: str
    value: str
    source: str | None = None
    line: int | None = None
    label_id: str | None = None
    value_id: str | None = None
    source_id: str | None = None
    params: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Commented:
    """A command line whose trailing ``# comment`` is catalogue words (``nvidia-smi    # on the
    host``); ``command`` empty: a line that is only the comment, after ``gap``."""

    command: str
    comment: Words
    gap: str = "    "


@dataclass(frozen=True)
class RunStep:
    """A command to run: ``argv`` as is (argv[0] the target's own interpreter or tool).

    ``where``: "application" (in the application's environment, as its user), "host" (on the
    machine, as root where it changes the system), "container_host" (on the host of the container).
    """

    argv: tuple[str, ...]
    where: str = "application"
    option: int = 1
    """Steps of one option are done together; a second option is an alternative to the first."""
    kind: str = "run"


@dataclass(frozen=True)
class EnvironmentStep:
    """Variables the application must start with. ``mode`` "prepend": before the current value
    (joined with ``separator``), "set": instead of it. ``scope``: "process" (the shell or launcher
    that starts it), "systemd" (a drop-in of ``unit``), "container" (``-e`` of the container)."""

    variables: dict[str, str]
    scope: str = "process"
    mode: str = "prepend"
    separator: str = ":"
    unit: str | None = None
    option: int = 1
    kind: str = "environment"


@dataclass(frozen=True)
class CodeStep:
    """Statements in the application's language, shown as code (never as a shell command)."""

    code: str
    language: str = "python"
    where: str = "before the first InferenceSession"
    option: int = 1
    kind: str = "code"
    where_words: Words | None = None
    """``where`` as catalogue words (resources/texts/<lang>/labels/remedy.json), shown in the
    reader's language; None: ``where`` is shown as written (a document of a previous version)."""


@dataclass(frozen=True)
class ConfigStep:
    """One value in a JSON configuration file: ``pointer`` (RFC 6901) gets ``value``."""

    file: str
    pointer: str
    value: Any
    option: int = 1
    kind: str = "config"


@dataclass(frozen=True)
class ManualStep:
    """What cannot be a command: a reboot, a driver installed on the host."""

    text: str
    option: int = 1
    kind: str = "manual"
    words: Words | None = None
    """``text`` as catalogue words, shown in the reader's language; None: shown as written."""


Step = RunStep | EnvironmentStep | CodeStep | ConfigStep | ManualStep


@dataclass(frozen=True)
class Remediation:
    """The fix: what to do, the exact commands, and how to verify it by hand.

    ``steps`` is the same fix as typed records a machine can apply (``commands`` stays their
    shell form for people and older readers)."""

    summary: str
    commands: tuple[str, ...] = ()
    verify: str | None = None
    steps: tuple[Step, ...] = ()
    comments: tuple[Words | None, ...] = ()
    """The words of each command's trailing ``# comment`` (by position in ``commands``; None: a
    command without one), shown in the reader's language: the English stays in ``commands``."""


def step_shell(step: Step) -> str | None:
    """The step as one shell command a person can paste (None: code, config and manual steps)."""
    if isinstance(step, RunStep):
        return shlex.join(step.argv)
    if not isinstance(step, EnvironmentStep):
        return None
    windows = step.separator == ";"
    parts = []
    for name, value in step.variables.items():
        if step.scope == "container":
            parts.append(f"-e {name}={shlex.quote(value)}")
        elif step.scope == "systemd":
            parts.append(f'Environment="{name}={value}"')
        elif windows:
            parts.append(f"set {name}={value}" + (f";%{name}%" if step.mode == "prepend" else ""))
        else:
            tail = f"{step.separator}${name}" if step.mode == "prepend" else ""
            parts.append(f"export {name}={shlex.quote(value)}{tail}")
    if step.scope == "systemd":
        unit = step.unit or "the-service"
        return f"systemctl edit {unit}  # add under [Service]: " + " ".join(parts)
    return " ".join(parts) if step.scope == "container" else "; ".join(parts)


def step_from_dict(data: dict[str, Any]) -> Step:
    """A step read back from the report document (a schema-valid ``remediation.steps[]`` item)."""
    kind = data.get("kind")
    option = int(data.get("option") or 1)
    if kind == "run":
        return RunStep(tuple(str(a) for a in data["argv"]), str(data.get("where") or "application"), option)
    if kind == "environment":
        return EnvironmentStep(
            {str(k): str(v) for k, v in dict(data["variables"]).items()},
            str(data.get("scope") or "process"),
            str(data.get("mode") or "prepend"),
            str(data.get("separator") or ":"),
            data.get("unit"),
            option,
        )
    if kind == "code":
        language = str(data.get("language") or "python")
        where = str(data.get("where") or "")
        return CodeStep(
            str(data["code"]), language, where, option, where_words=words_of_document(data.get("where_words"))
        )
    if kind == "config":
        return ConfigStep(str(data["file"]), str(data["pointer"]), data.get("value"), option)
    return ManualStep(str(data.get("text") or ""), option, words=words_of_document(data.get("words")))


def words_of_document(data: Any) -> Words | None:
    """Catalogue words read back from the document (``{"id", "params"}``); None for anything else."""
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        return None
    params = data.get("params")
    return Words(data["id"], dict(params) if isinstance(params, dict) else {})


@dataclass(frozen=True)
class Finding:
    """A checked fact that matters, with a stable dotted id and a cause code."""

    id: str
    cause: str
    layer: Layer
    severity: Severity
    title: str
    detail: str
    evidence: tuple[Evidence, ...] = ()
    remediation: Remediation | None = None
    texts: dict[str, dict[str, str]] = field(default_factory=dict)
    """The words as made (language code -> {"title", "detail", "fix", "verify"}): read by renderers
    only where ``text`` is absent (a finding whose parameters differ by language, a document of a
    previous version)."""
    text: dict[str, Any] = field(default_factory=dict)
    """The words as a key and parameters, chosen where they are shown (core/language/texts.py
    ``finding_words``): ``{"key": id, "params": {...}, "append": {"detail": [note, ...]}}``."""


def rank_findings(
    findings: list[Finding] | tuple[Finding, ...], tier: Callable[[Finding], int] | None = None
) -> tuple[Finding, ...]:
    """Order findings as a technician should work through them.

    ``tier`` first (core/judgement/judge.py passes the declared role: the configuration that decides CPU or
    GPU, then the other causes, then the context); without it, configuration findings come first.
    Then errors before warnings before information, and within each, the lowest layer first: a
    broken lower layer breaks everything above it, so the top cause is the lowest broken layer.
    The original order breaks ties.
    """
    first = tier or (lambda finding: 0 if finding.layer == Layer.CONFIG else 1)
    indexed = list(enumerate(findings))
    indexed.sort(
        key=lambda pair: (
            first(pair[1]),
            SEVERITY_ORDER.index(pair[1].severity),
            LAYER_ORDER.index(pair[1].layer),
            pair[0],
        )
    )
    return tuple(finding for _, finding in indexed)


def finding_from_dict(data: dict[str, object]) -> Finding:
    """A finding read back from the report document (a schema-valid ``findings[]`` item)."""
    evidence = data.get("evidence") or []
    remediation = data.get("remediation")
    texts = data.get("texts") or {}
    assert isinstance(evidence, list) and isinstance(texts, dict)
    return Finding(
        id=str(data["id"]),
        cause=str(data["cause"]),
        layer=Layer(str(data["layer"])),
        severity=Severity(str(data["severity"])),
        title=str(data.get("title") or ""),
        detail=str(data.get("detail") or ""),
        evidence=tuple(
            Evidence(
                label=str(item["label"]),
                value=str(item["value"]),
                source=item.get("source"),
                line=item.get("line"),
                label_id=item.get("label_id"),
                value_id=item.get("value_id"),
                source_id=item.get("source_id"),
                params=dict(item.get("params") or {}),
            )
            for item in evidence
        ),
        remediation=(
            Remediation(
                summary=str(remediation.get("summary") or ""),
                commands=tuple(str(c) for c in remediation.get("commands") or ()),
                verify=remediation.get("verify"),
                steps=tuple(step_from_dict(step) for step in remediation.get("steps") or ()),
                comments=tuple(words_of_document(c) for c in remediation.get("comments") or ()),
            )
            if isinstance(remediation, dict)
            else None
        ),
        texts={str(lang): {str(k): str(v) for k, v in words.items()} for lang, words in texts.items()},
        text=dict(data["text"]) if isinstance(data.get("text"), dict) else {},  # type: ignore[call-overload]
    )
