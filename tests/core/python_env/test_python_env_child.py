"""The interpreter child script and collect_python_env, on real interpreters and venvs."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from fallback_doctor.core.readers.collect.errors import CollectError
from fallback_doctor.core.readers.collect.python_env import collect_python_env, parse_python_env
from hypothesis import given
from hypothesis import strategies as st
from python_env_venvs import empty_py38, scenario, site_packages, venv_python

CHILD = Path(__file__).resolve().parents[3] / "core" / "readers" / "probes" / "python_env_child.py"


def _child_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("python_env_child_under_test", CHILD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHILD_MODULE = _child_module()


def _run_child(python: Path | str, *args: str) -> dict[str, object]:
    out = subprocess.run(
        [str(python), str(CHILD), *args], capture_output=True, text=True, timeout=30, check=True
    ).stdout
    value = json.loads(out)
    assert isinstance(value, dict)
    return value


def test_child_uses_only_the_standard_library() -> None:
    text = CHILD.read_text(encoding="utf-8")
    for forbidden in ("import onnxruntime", "import torch", "fallback_doctor", "import numpy"):
        assert forbidden not in text


def test_collect_on_a_venv_with_onnxruntime_gpu() -> None:
    venv = scenario("gpu_1_31_1")
    facts = collect_python_env(str(venv_python(venv)), dict(os.environ))
    site = str(site_packages(venv))
    assert facts.version.startswith("3.11.")
    assert facts.platform == sys.platform
    assert facts.prefix == str(venv)
    assert facts.in_virtualenv
    assert site in facts.site_packages
    assert site in facts.sys_path
    assert str(CHILD.parent) not in facts.sys_path  # the probe's own folder is not the app's
    [ort] = facts.distributions_named("onnxruntime_gpu")
    assert (ort.name, ort.version, ort.location) == ("onnxruntime-gpu", "1.31.1", site)
    assert ort.metadata_dir == os.path.join(site, "onnxruntime_gpu-1.31.1.dist-info")


def test_child_runs_on_python_3_8() -> None:
    venv = empty_py38()
    if venv is None:
        pytest.skip("no Python 3.8 interpreter on this machine")
    facts = collect_python_env(str(venv_python(venv)), dict(os.environ))
    assert facts.version.startswith("3.8.")
    assert str(site_packages(venv)) in facts.site_packages
    assert facts.distributions == ()  # a venv with nothing installed
    # importlib.metadata exists on 3.8 too, and agrees
    both = _run_child(venv_python(venv), "--importlib-metadata")
    assert both["distributions"] == []


@pytest.mark.parametrize("name", ["gpu_then_cpu", "cpu_1_23_2"])
def test_hand_scan_agrees_with_importlib_metadata(name: str) -> None:
    python = venv_python(scenario(name))
    by_hand = _run_child(python)["distributions"]
    by_metadata = _run_child(python, "--importlib-metadata")["distributions"]
    assert isinstance(by_hand, list) and isinstance(by_metadata, list)
    key = lambda item: (item["name"], item["version"], item["metadata_dir"])  # noqa: E731
    assert sorted(map(key, by_hand)) == sorted(map(key, by_metadata))
    assert "onnxruntime" in {item["name"] for item in by_hand}


def test_the_environment_given_is_the_one_used(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    info = extra / "somepkg-2.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: somepkg\nVersion: 2.0\n\nbody\n")
    env = dict(os.environ, PYTHONPATH=str(extra))
    facts = collect_python_env(str(venv_python(scenario("cpu_1_23_2"))), env)
    assert str(extra) in facts.sys_path
    [dist] = facts.distributions_named("SomePkg")
    assert (dist.version, dist.location) == ("2.0", str(extra))


def test_a_missing_interpreter_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CollectError, match="could not start the interpreter"):
        collect_python_env(str(tmp_path / "nope" / "python"), {})


def test_a_crashing_interpreter_is_a_clear_error(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'Fatal Python error: init_fs_encoding' >&2\nkill -SEGV $$\n")
    fake.chmod(0o755)
    with pytest.raises(CollectError, match=r"crashed with SIGSEGV.*init_fs_encoding"):
        collect_python_env(str(fake), {})


def test_garbage_output_is_a_clear_error(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'this is not json'\n")
    fake.chmod(0o755)
    with pytest.raises(CollectError, match="printed no package listing"):
        collect_python_env(str(fake), {})


def test_a_hanging_interpreter_is_stopped(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nsleep 30\n")
    fake.chmod(0o755)
    with pytest.raises(CollectError, match="did not finish"):
        collect_python_env(str(fake), {}, timeout_s=0.5)


def test_output_after_other_prints_is_found() -> None:
    line = json.dumps(
        {"version": "3.9.1", "prefix": "/p", "platform": "linux", "distributions": [], "executable": "/p/py"}
    )
    facts = parse_python_env(f"sitecustomize says hello\n{line}\n")
    assert facts.version == "3.9.1"


def test_incomplete_output_is_a_clear_error() -> None:
    with pytest.raises(CollectError, match="incomplete"):
        parse_python_env(json.dumps({"distributions": []}))


HEADER_NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9._-]{0,20}", fullmatch=True)
HEADER_VERSION = st.from_regex(
    r"[0-9]{1,3}(\.[0-9]{1,3}){0,3}(rc[0-9]|\.post[0-9]|\.dev[0-9])?", fullmatch=True
)


@given(
    name=HEADER_NAME,
    version=HEADER_VERSION,
    extra=st.lists(st.sampled_from(["Summary: x", "Requires-Dist: numpy>=1", "License: MIT"]), max_size=4),
    body=st.text(max_size=200),
)
def test_metadata_headers_parse(name: str, version: str, extra: list[str], body: str) -> None:
    text = "\n".join(["Metadata-Version: 2.1", f"Name: {name}", *extra, f"Version: {version}"])
    text += "\n\n" + body + "\nName: not-this\nVersion: 0\n"
    assert CHILD_MODULE.parse_metadata_headers(text) == (name, version)


@given(st.text(max_size=300))
def test_metadata_header_parser_never_raises(text: str) -> None:
    name, version = CHILD_MODULE.parse_metadata_headers(text)
    assert name is None or isinstance(name, str)
    assert version is None or isinstance(version, str)
