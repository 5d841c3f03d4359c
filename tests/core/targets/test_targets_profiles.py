"""Targets as profiles: a kind registered in core/readers/targets/registry.py appears on every surface
that lists kinds (the CLI's --target choices and help of diagnose, check and test-inference; the
stack page; check's status line; resolving) without any of them naming it. The wizard's first
page is tests/gui/test_gui_start_profiles.py."""

from __future__ import annotations

import contextlib
import dataclasses
import io
from pathlib import Path

import pytest
from fallback_doctor.cli.main import build_parser
from fallback_doctor.core.flow.step_run import skip_reason
from fallback_doctor.core.readers.targets.registry import find_profile, target_kinds, wizard_profiles
from fallback_doctor.core.readers.targets.resolve import resolve_target
from fallback_doctor.core.readers.targets.spec import TargetSpec
from fallback_doctor.core.views.pages_stack import layer_parts, stack_layers
from fallback_doctor.core.watch.check import run_check
from targets_dummy import triton_registered


def _help(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        build_parser().parse_args([*argv, "--help"])
    return out.getvalue()


def test_the_built_in_kinds_are_one_list_in_the_order_the_wizard_offers_them() -> None:
    assert target_kinds() == ("auto", "bareun", "python", "native", "log")
    assert [p.kind for p in wizard_profiles()] == ["bareun", "python", "native", "log"]
    assert target_kinds(probed=True) == ("auto", "bareun", "python", "native")


@pytest.mark.parametrize("command", ["diagnose", "check", "test-inference"])
def test_a_registered_kind_is_a_choice_of_every_command_with_its_help(command: str) -> None:
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        build_parser().parse_args([command, "--target", "triton"])
    with triton_registered():
        assert build_parser().parse_args([command, "--target", "triton"]).target == "triton"
        assert "NVIDIA Triton server" in " ".join(_help(command).split())
    assert find_profile("triton") is None


def test_a_registered_kind_is_resolved_by_its_own_profile(tmp_path: Path) -> None:
    with triton_registered():
        target = resolve_target(TargetSpec(kind="triton", lib_dir=str(tmp_path)), {})
    assert (target.kind, target.lib_path) == ("triton", str(tmp_path))
    # Its probe is the library's: with no folder, the reason is the profile's own.
    no_folder = dataclasses.replace(target, lib_path=None)
    with triton_registered():
        assert skip_reason(target, None) is None
        assert skip_reason(no_folder, None) == "the backend folder was not found"


def test_the_stack_page_names_a_registered_kind_in_its_words() -> None:
    document = {"target": {"kind": "triton"}, "environment": {}}
    with triton_registered():
        application = stack_layers(document)[-1]
        words = layer_parts(application, "en")["found"]
    assert "a Triton server" in words
    assert "a Triton server" not in layer_parts(stack_layers(document)[-1], "en")["found"]


def test_check_resolves_a_registered_kind_and_calls_the_server_by_its_name(tmp_path: Path) -> None:
    with triton_registered():
        result = run_check(TargetSpec(kind="triton", lib_dir=str(tmp_path)), {}, read_log=False)
    assert result.code == "not_running"
    assert result.app == "tritonserver"
