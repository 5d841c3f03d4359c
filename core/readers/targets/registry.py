"""The registry of target profiles: the one list of kinds every surface asks.

The CLI's ``--target`` choices (diagnose, check, test-inference, gui), the wizard's first page,
the stack page's words and the checks that depend on the kind read it here. A new kind of
target registers its TargetProfile (core/readers/targets/builtin.py declares the four built in);
``auto`` is a choice of the command line, not a kind: it tries each profile's ``detect``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from fallback_doctor.core.readers.targets.profile import Probe, TargetProfile

if TYPE_CHECKING:
    from fallback_doctor.core.model.facts.target import TargetFacts

AUTO = "auto"
"""The command line's default: the first profile whose ``detect`` finds it, else ``python``."""
FALLBACK = "python"
"""What ``auto`` takes when no profile detects its target: the Python environment."""

_PROFILES: dict[str, TargetProfile] = {}


def register(profile: TargetProfile) -> None:
    """Add a kind of target (its kind must be new)."""
    if profile.kind in _PROFILES or profile.kind == AUTO:
        raise ValueError(f"target kind {profile.kind!r} is registered twice")
    _PROFILES[profile.kind] = profile


@contextmanager
def registered(profile: TargetProfile) -> Iterator[TargetProfile]:
    """A profile registered for the length of a ``with`` block (a plug-in's test)."""
    register(profile)
    try:
        yield profile
    finally:
        del _PROFILES[profile.kind]


def profiles() -> tuple[TargetProfile, ...]:
    """Every registered profile, in the order registered (``auto`` tries them in this order)."""
    return tuple(_PROFILES.values())


def find_profile(kind: str | None) -> TargetProfile | None:
    """The profile of ``kind``; None for a kind not registered (a bundle of another version)."""
    return _PROFILES.get(kind or "")


def probe_of(kind: str | None) -> Probe | None:
    """Which probe tests a target of ``kind`` (None: nothing to run, or a kind not registered)."""
    profile = find_profile(kind)
    return profile.probe if profile is not None else None


def remedy_terms(target: TargetFacts | None) -> str | None:
    """In whose terms the target's library folder is remedied (TargetProfile.remedy_terms)."""
    profile = find_profile(target.kind) if target is not None else None
    return profile.remedy_terms if profile is not None else None


def wizard_profiles() -> tuple[TargetProfile, ...]:
    """The kinds the wizard's first page offers, in order (each with its field)."""
    return tuple(p for p in _PROFILES.values() if p.wizard is not None)


def wizard_target(kind: str, path: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The wizard's target dict for ``path`` typed in the field of ``kind`` (an existing path;
    empty for an optional field); ``given``: the command line's other values (pid, config)."""
    profile = _PROFILES[kind]
    if profile.wizard is None:
        raise ValueError(f"target kind {kind!r} has no field on the wizard's first page")
    if not path:
        return {"kind": kind, "pid": given.get("pid")}
    return {"kind": kind, **profile.wizard.to_target(path, given)}


def target_kinds(*, probed: bool = False) -> tuple[str, ...]:
    """The command line's ``--target`` choices: ``auto`` and every kind (``probed``: those with a
    test inference only)."""
    return (AUTO, *(p.kind for p in _PROFILES.values() if p.probe is not None or not probed))


def kinds_help(*, probed: bool = False) -> str:
    """``--target``'s choices, each with what it is (for its help)."""
    helps = [p.help for p in _PROFILES.values() if p.probe is not None or not probed]
    found = " or ".join(p.kind for p in _PROFILES.values() if p.detect is not None)
    return f"auto ({found} when found, else the Python environment), {', '.join(helps)}"


def _register_builtin() -> None:
    from fallback_doctor.core.readers.targets.builtin import BUILTIN

    for profile in BUILTIN:
        register(profile)


_register_builtin()
