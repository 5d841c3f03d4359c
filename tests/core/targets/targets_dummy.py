"""A target kind the project does not have (an NVIDIA Triton server), registered by tests only:
it must appear on every surface that lists kinds without any of them naming it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from fallback_doctor.core.language.texts import load_labels
from fallback_doctor.core.model.facts.target import TargetFacts
from fallback_doctor.core.readers.targets.profile import Probe, ResolveOptions, TargetProfile, WizardField
from fallback_doctor.core.readers.targets.registry import registered
from fallback_doctor.core.readers.targets.spec import TargetSpec

LABELS = {
    "start.triton": {"en": "A Triton server (its backend folder)", "ko": "Triton 서버(백엔드 폴더)"},
    "start.triton.folder": {"en": "Backend folder", "ko": "백엔드 폴더"},
    "stack.app.triton": {"en": "a Triton server {version}", "ko": "Triton 서버 {version}"},
}


def _resolve(spec: TargetSpec, env: Mapping[str, str], options: ResolveOptions) -> TargetFacts:
    return TargetFacts(
        kind="triton",
        root=spec.lib_dir,
        config_path=None,
        log_paths=spec.logs,
        lib_path=spec.lib_dir,
        requested_provider="cuda",
        pid=spec.pid,
    )


def _choice(path: str, given: Mapping[str, Any]) -> dict[str, Any]:
    return {"lib_dir": path, "pid": given.get("pid")}


TRITON = TargetProfile(
    kind="triton",
    help="triton (an NVIDIA Triton server: --lib-dir)",
    resolve=_resolve,
    probe=Probe.LIBRARY,
    no_probe="the backend folder was not found",
    server_name="tritonserver",
    wizard=WizardField("start.triton.folder", ("lib_dir",), _choice, picks="folder"),
)


@contextmanager
def triton_registered() -> Iterator[TargetProfile]:
    """TRITON in the registry and its words in the catalogue, for one ``with`` block."""
    labels = load_labels()
    labels.update(LABELS)
    try:
        with registered(TRITON) as profile:
            yield profile
    finally:
        for key in LABELS:
            del labels[key]
