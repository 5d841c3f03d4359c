"""What an export would write, as data: bounds, the extra members, the options, and the preview.

:func:`~fallback_doctor.core.bundle.export.prepare_bundle` makes a :class:`BundlePreview`;
:mod:`write` writes it, :mod:`preview_text` prints it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from fallback_doctor.core.bundle.manifest import REPORT_NAME, Cut
from fallback_doctor.core.redaction.pseudonyms import Pseudonyms
from fallback_doctor.core.redaction.redaction import Redaction

MiB = 1024 * 1024

REQUIRED_MEMBERS = (REPORT_NAME,)
"""Members that cannot be left out (a bundle without its report cannot be opened)."""


@dataclass(frozen=True)
class Limits:
    """Bounds on what goes into a bundle (UTF-8 bytes, before compression)."""

    log: int = 4 * MiB
    """Twice the old 2 MiB, so whole start-up sections fit; redaction of 4 MiB takes about a second
    (benchmarks/bench_redact.py)."""
    config: int = 1 * MiB
    probe: int = 1 * MiB
    samples: int = 8 * MiB
    other: int = 2 * MiB
    total: int = 16 * MiB
    """All members together (the largest texts are shortened before redaction). The preview holds
    each member's text twice (as read and redacted) as Python text, up to 4 bytes a character:
    16 MiB of UTF-8 keeps an export well under 300 MB of memory (benchmarks/bench_hostile.py,
    "8 logs, each at the 4 MiB bound"), and still carries four whole 4 MiB logs."""

    def for_kind(self, kind: str) -> int:
        """The bound of one member of ``kind``."""
        return (
            int(getattr(self, kind, self.other))
            if kind in ("log", "config", "probe", "samples")
            else self.other
        )


@dataclass(frozen=True)
class ExtraMember:
    """Something read on this machine that goes into the bundle besides the report.

    ``name`` is its path in the bundle ("config/bareun.yml", "logs/server.log.gz",
    "probe/as_is.stderr.txt", "samples.csv"); ``data`` the bytes as read (gzip, UTF-16 … are
    decoded) or text; ``kind`` "config", "log", "probe", "samples" or "other" (logs keep their
    end when cut, the others their start); ``source`` where it was read from.
    """

    name: str
    data: bytes | str
    kind: str = "other"
    source: str | None = None
    refused: str | None = None
    """Why the file at ``source`` was not taken (a credential file, a FIFO, not text …); no data then."""


@dataclass(frozen=True)
class BundleOptions:
    """Choices for one export."""

    redact: bool = True
    """False only when asked deliberately (``--no-redact``); the manifest says so."""
    exclude: frozenset[str] = frozenset()
    """Members to leave out (by name in the bundle); report.json cannot be left out."""
    redact_more: tuple[str, ...] = ()
    """Extra literal strings to mask wherever they appear."""
    users: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    """Identities known beforehand (this machine's own user and host name are always added)."""
    use_local_identity: bool = True
    lang: str = "en"
    """Language of report.html."""
    limits: Limits = field(default_factory=Limits)
    created: str | None = None
    """Creation time (ISO 8601, UTC); now when None."""
    fleet_host: str | None = None
    """The fleet host (inventory name) the bundle is made for; the manifest keeps its sha256."""


@dataclass(frozen=True)
class MemberPreview:
    """One member as it would be written: original and redacted text, each redaction's span."""

    name: str
    kind: str
    original: str
    """The text as read (for JSON members: pretty-printed), what the spans refer to."""
    redacted: str
    """What goes into the zip."""
    redactions: tuple[Redaction, ...]
    """Spans refer to ``original``."""
    included: bool = True
    source: str | None = None
    form: str = "utf-8"
    original_size: int = 0
    cut: int = 0
    """Bytes left out to stay within the bound."""
    derived: bool = False
    """Made from other members (report.html): it has no redactions of its own."""


@dataclass(frozen=True)
class BundlePreview:
    """Everything an export would write, for people to check first. Nothing is written yet."""

    members: tuple[MemberPreview, ...]
    options: BundleOptions
    created: str
    document: dict[str, Any]
    """The report document as it will be in the bundle (redacted)."""
    pseudonyms: Pseudonyms
    cuts: tuple[Cut, ...] = ()
    protected: tuple[str, ...] = ()
    """The target's files and folders (unredacted), where the bundle may not be written
    (core/bundle/protected.py)."""

    def member(self, name: str) -> MemberPreview:
        """The member called ``name``."""
        for member in self.members:
            if member.name == name:
                return member
        raise KeyError(name)

    def included(self) -> list[MemberPreview]:
        """The members that will be written."""
        return [member for member in self.members if member.included]

    def redaction_counts(self) -> dict[str, int]:
        """How many redactions of each kind, over the included members."""
        counts: Counter[str] = Counter()
        for member in self.included():
            counts.update(redaction.kind for redaction in member.redactions)
        return dict(sorted(counts.items()))
