"""The name a bundle is offered under: which host, which diagnosis, so that twenty of them in a
support ticket are told apart (``fallback-doctor-web01-20261205-1432.zip``).

By hand: ``echo "fallback-doctor-$(hostname -s)-$(date +%Y%m%d-%H%M).zip"``.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping
from datetime import datetime

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_HOST_LENGTH = 40


def _host_part(document: Mapping[str, object]) -> str:
    """This machine's short host name, or "log" where the evidence is a log from elsewhere."""
    from fallback_doctor.core.readers.targets.registry import find_profile

    target = document.get("target") or {}
    profile = find_profile(str(target.get("kind") or "")) if isinstance(target, Mapping) else None
    if profile is not None and not profile.inspects_machine:
        return profile.kind
    host = socket.gethostname().split(".", 1)[0]
    return _UNSAFE.sub("-", host).strip("-.")[:_HOST_LENGTH] or "host"


def _date_part(document: Mapping[str, object]) -> str:
    """The diagnosis's own time (``created``), minutes included; now where it has none."""
    created = document.get("created")
    try:
        when = datetime.fromisoformat(str(created)) if created else datetime.now()
    except ValueError:
        when = datetime.now()
    return when.strftime("%Y%m%d-%H%M")


def default_bundle_name(document: Mapping[str, object], suffix: str = ".zip") -> str:
    """``fallback-doctor-<host>-<yyyymmdd-hhmm>.zip`` (or ``suffix``) for the diagnosis in ``document``."""
    return f"fallback-doctor-{_host_part(document)}-{_date_part(document)}{suffix}"
