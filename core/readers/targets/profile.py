"""A target profile: everything the tool knows about one kind of target, in one place.

Like sos's policies (one class per distribution that says how to find and read it), a profile
says what a kind of target is, how ``auto`` finds it and how it is resolved (its configuration
read), whether its server process is looked for, which probe tests it, in whose terms its
remedies are written, and which field the wizard's first page asks for. The registry
(core/readers/targets/registry.py) holds them; the CLI's ``--target`` choices, the wizard's first page,
the stack page and ``check`` ask it instead of naming kinds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from fallback_doctor.core.model.facts.target import RunningProcess, TargetFacts
    from fallback_doctor.core.readers.targets.spec import TargetSpec


class TargetNotFound(Exception):  # noqa: N818 - the name is the brief's
    """A target named by the user does not exist (a usage error: the CLI exits 2)."""


class Probe(StrEnum):
    """Which probe tests a target: what the test inference runs."""

    LIBRARY = "library"
    """A child of ours loads the application's own ONNX Runtime library through the C API."""
    PYTHON = "python"
    """A probe script runs under the application's own interpreter."""


@dataclass(frozen=True)
class ResolveOptions:
    """How a target is resolved: ``roots`` replaces the default install locations (tests);
    ``load_library`` False reads the ONNX Runtime version from the file name only."""

    roots: Sequence[str] | None = None
    load_library: bool = False
    running: RunningProcess | None = None
    """The process ``--pid`` names, read from /proc: a Python one's interpreter is the target's."""


@dataclass(frozen=True)
class WizardField:
    """The one field the wizard's first page asks for a target of this kind."""

    label_key: str
    """The field's label in the text catalogue ("start.folder")."""
    fills_from: tuple[str, ...]
    """The wizard target's keys the field is filled from (command line, last target); first set wins."""
    to_target: Callable[[str, Mapping[str, Any]], dict[str, Any]]
    """The wizard's target dict (less its kind) for the path typed, which exists; the second
    argument holds what the command line gave beside it ("pid", "config")."""
    picks: Literal["folder", "file"] = "file"
    """What the browse button opens: a folder chooser or a file chooser."""
    optional: bool = False
    """Left empty, the target is still complete (a Python target: the tool's own interpreter)."""
    lists_found: bool = False
    """The page lists the installations found on this machine under the choice (Bareun)."""


Resolver = Callable[["TargetSpec", Mapping[str, str], ResolveOptions], "TargetFacts"]
Detector = Callable[["TargetSpec", Mapping[str, str], ResolveOptions], bool]


@dataclass(frozen=True)
class TargetProfile:
    """One kind of target (bareun, python, native, log, …): the protocol every kind follows."""

    kind: str
    """The name on the command line (``--target KIND``) and in the report (target.kind)."""
    help: str
    """What the target is, for ``--help`` ("bareun (the Bareun server)")."""
    resolve: Resolver
    """How it is resolved into TargetFacts: its files found, its configuration read and checked.
    Raises TargetNotFound (a usage error) when what the user named is not there."""
    detect: Detector | None = None
    """Whether ``--target auto`` takes this kind on this machine (Bareun: an installation is found);
    None: auto never picks it."""
    probe: Probe | None = None
    """Which probe tests it; None: there is nothing to run (a log)."""
    no_probe: str = "there is nothing of the application's to run"
    """Why no test inference can run: said when ``probe`` is None, or when a library probe has
    no library folder."""
    finds_process: bool = False
    """Its server process is looked for (by executable, library or port) even without --pid."""
    remedy_terms: Literal["configuration", "application"] | None = None
    """In whose terms a library folder without a GPU build is remedied: the configuration's
    libPath (Bareun), or the application's own packaging (NuGet, Maven, npm: a native application)."""
    server_name: str | None = None
    """What ``check``'s status line calls the server (else the process's executable name)."""
    wizard: WizardField | None = None
    """The field the wizard's first page asks for; None: the kind is not offered there."""
    inspects_machine: bool = True
    """The evidence is this machine: its driver, CUDA, cuDNN, ONNX Runtime, device and platform
    are collected beside the target. False: the evidence comes from elsewhere (a customer's log
    read on the technician's laptop), and nothing of the machine the tool runs on is collected,
    so no finding about it can appear; the machine's own facts come with another target plus
    ``--log``."""

    @property
    def stack_label(self) -> str:
        """The stack page's words for the application layer ("stack.app.<kind>")."""
        return f"stack.app.{self.kind}"

    @property
    def elsewhere_label(self) -> str:
        """Why this machine's layers were not inspected ("stack.elsewhere.<kind>"; only read
        where ``inspects_machine`` is False)."""
        return f"stack.elsewhere.{self.kind}"

    @property
    def no_inference_label(self) -> str:
        """Why no test inference can run, in the CPU and GPU pages' words ("nothing_to_run.<kind>";
        only read where ``probe`` is None)."""
        return f"nothing_to_run.{self.kind}"

    @property
    def choice_label(self) -> str:
        """The wizard's first-page choice ("start.<kind>")."""
        return f"start.{self.kind}"
