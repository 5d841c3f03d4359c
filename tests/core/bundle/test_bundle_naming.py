"""A bundle is offered under a name that says which host and which diagnosis (issue 26)."""

from __future__ import annotations

import re
import socket

import pytest
from fallback_doctor.core.bundle.naming import default_bundle_name


def test_the_name_holds_this_hosts_short_name_and_the_diagnosiss_time() -> None:
    name = default_bundle_name({"created": "2026-12-05T14:32:09+00:00", "target": {"kind": "python"}})
    host = re.sub(r"[^A-Za-z0-9._-]+", "-", socket.gethostname().split(".")[0]).strip("-.")[:40]
    assert name == f"fallback-doctor-{host}-20261205-1432.zip"


def test_a_log_from_elsewhere_is_not_named_after_this_machine() -> None:
    name = default_bundle_name({"created": "2026-01-02T03:04:05", "target": {"kind": "log"}})
    assert name == "fallback-doctor-log-20260102-0304.zip"


@pytest.mark.parametrize("created", [None, "", "not a date", 17])
def test_a_document_without_a_readable_time_still_gets_a_dated_name(created: object) -> None:
    assert re.fullmatch(
        r"fallback-doctor-[\w.-]+-\d{8}-\d{4}\.zip", default_bundle_name({"created": created})
    )


def test_a_host_name_with_odd_characters_gives_a_file_name_without_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: "we b/01\x1b]0;x\x07" + "a" * 80 + ".corp.example")
    name = default_bundle_name({"created": "2026-12-05T14:32:00"})
    assert "/" not in name and "\x1b" not in name and " " not in name
    assert len(name) < 80
