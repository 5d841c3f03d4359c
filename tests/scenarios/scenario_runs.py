"""Scenarios on real stacks: run ONNX Runtime itself there, and run ``fallback-doctor diagnose``.

A scenario is a built stack (``scenario_stacks.STACKS``) plus the loader path the application
would run with. Two things are run in it, each in a child process with a clean environment:

* ``ort_child.py`` under the stack's own interpreter: ONNX Runtime's own behaviour (available
  providers, the session's providers, its log lines);
* ``python -m fallback_doctor diagnose --python <stack python> --json`` under the tool's
  interpreter, with the same loader path.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import scenario_stacks as stacks

HERE = Path(__file__).resolve().parent
MODEL = HERE / "data" / "add.onnx"
ORT_CHILD = HERE / "ort_child.py"

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
TRT = "TensorrtExecutionProvider"

#: What the loader says when ONNX Runtime cannot dlopen a provider or one of its needs.
_CANNOT_OPEN = re.compile(r"error: (\S+\.so[.\d]*): cannot open shared object file")


@dataclass(frozen=True)
class Scenario:
    """A stack and the loader path it runs with; ``cause`` is the scenario's own finding."""

    id: str
    stack: str
    cause: str
    #: folders, relative to site-packages, put on LD_LIBRARY_PATH (in this order)
    ld_path: tuple[str, ...] = ()
    title: str = ""

    def stack_obj(self) -> stacks.Stack:
        """The stack this scenario runs on."""
        return stacks.STACKS[self.stack]

    def env(self) -> dict[str, str]:
        """The environment both children get: clean, plus LD_LIBRARY_PATH when the scenario sets it."""
        env = stacks.clean_env()
        if self.ld_path:
            site = stacks.site_packages(self.stack_obj())
            env["LD_LIBRARY_PATH"] = ":".join(str(site / p) for p in self.ld_path)
        return env


CU13_LIB = "nvidia/cu13/lib"
CU12_LIBS = tuple(
    f"nvidia/{c}/lib"
    for c in ("cuda_runtime", "cublas", "curand", "cufft", "cuda_nvrtc", "nvjitlink", "cudnn")
)

SCENARIOS: dict[str, Scenario] = {
    s.id: s
    for s in (
        Scenario("s1_cpu_only", "cpu-only", "ep_not_in_build", title="CPU-only onnxruntime"),
        Scenario(
            "s2_conflict",
            "gpu-and-cpu",
            "package_conflict",
            title="onnxruntime and onnxruntime-gpu in one environment",
        ),
        Scenario(
            "s2b_conflict_gpu_last",
            "cpu-and-gpu",
            "package_conflict",
            title="onnxruntime, then onnxruntime-gpu over it",
        ),
        Scenario(
            "s3_no_cuda",
            "gpu13-bare",
            "cuda_runtime_missing",
            title="onnxruntime-gpu 1.31.1 without any CUDA library",
        ),
        Scenario(
            "s4_wheels_not_on_path",
            "gpu13-cuda13-wheels",
            "cuda_runtime_missing",
            title="CUDA 13 wheels installed, not on the loader path",
        ),
        Scenario(
            "s5_no_cudnn",
            "gpu13-cuda13-wheels",
            "cudnn_missing",
            (CU13_LIB,),
            title="CUDA 13 libraries on the loader path, no cuDNN",
        ),
        Scenario(
            "s5b_cudnn_not_on_path",
            "gpu13-full",
            "cudnn_missing",
            (CU13_LIB,),
            title="cuDNN wheel installed, its folder not on the loader path",
        ),
        Scenario(
            "s6_cuda12_build_cuda13_libs",
            "gpu12-cuda13-wheels",
            "cuda_major_mismatch",
            (CU13_LIB,),
            title="CUDA 12 build (1.23.2) with the CUDA 13 wheels on the path",
        ),
        Scenario(
            "s6b_cuda13_build_cuda12_libs",
            "gpu13-cuda12-wheels",
            "cuda_major_mismatch",
            CU12_LIBS,
            title="CUDA 13 build (1.31.1) with the CUDA 12 wheels and cuDNN on the path",
        ),
        Scenario(
            "s8_tensorrt",
            "gpu13-full",
            "tensorrt_missing",
            (CU13_LIB, "nvidia/cudnn/lib"),
            title="complete CUDA 13 stack with cuDNN, no TensorRT",
        ),
        Scenario(
            "s9_cuda12_full_stack",
            "gpu12-full",
            "driver_missing",
            CU12_LIBS,
            title="complete CUDA 12 stack with cuDNN (1.23.2): only the driver is missing",
        ),
    )
}


# --- ONNX Runtime itself ----------------------------------------------------------------------


@dataclass(frozen=True)
class OrtRun:
    """What ONNX Runtime did in a scenario environment."""

    result: dict[str, Any]
    output: str  # stderr, then the stdout lines other than the result line
    returncode: int

    @property
    def available(self) -> list[str]:
        """``ort.get_available_providers()``."""
        return list(self.result.get("available", []))

    @property
    def session_providers(self) -> list[str]:
        """``session.get_providers()`` of the session that asked for CUDA (or TensorRT)."""
        return list(self.result.get("session_providers", []))

    def first_missing_library(self) -> str | None:
        """The one library ONNX Runtime's dlopen error names (it only ever names the first)."""
        found = _CANNOT_OPEN.search(self.output)
        return found.group(1) if found else None


def run_ort(
    stack: stacks.Stack,
    env: dict[str, str],
    *,
    providers: tuple[str, ...] = (CUDA, CPU),
    preload: bool = False,
) -> OrtRun:
    """Run ``ort_child.py`` under the stack's interpreter; ONNX Runtime's words are kept."""
    cmd = [str(stack.python_exe), str(ORT_CHILD), str(MODEL), "--providers", ",".join(providers)]
    if preload:
        cmd.append("--preload")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    result: dict[str, Any] = {}
    rest = []
    for line in proc.stdout.splitlines():
        if line.startswith("ORT_CHILD_RESULT "):
            result = json.loads(line.split(" ", 1)[1])
        else:
            rest.append(line)
    output = proc.stderr + "\n" + "\n".join(rest)
    return OrtRun(result, output, proc.returncode)


# --- the diagnosis ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Diagnosis:
    """``fallback-doctor diagnose --json`` in a scenario: the document, exit code, stderr."""

    doc: dict[str, Any]
    returncode: int
    stderr: str
    command: list[str] = field(default_factory=list)

    @property
    def findings(self) -> list[dict[str, Any]]:
        """The findings in the order the tool ranked them."""
        return list(self.doc.get("findings", []))

    @property
    def causes(self) -> list[str]:
        """The findings' cause codes, in ranked order."""
        return [f.get("cause", "") for f in self.findings]

    def with_cause(self, cause: str) -> list[dict[str, Any]]:
        """The findings with that cause code."""
        return [f for f in self.findings if f.get("cause") == cause]

    def rank(self, cause: str) -> int:
        """Position of the first finding with that cause (ValueError when absent)."""
        return self.causes.index(cause)

    def describe(self) -> str:
        """A short listing for assertion messages."""
        lines = [f"verdict={self.doc.get('verdict')} rc={self.returncode}"]
        for f in self.findings:
            lines.append(
                f"  {f.get('cause')} [{f.get('layer')}/{f.get('severity')}] {f.get('id')}: {f.get('title')}"
            )
        if self.stderr.strip():
            lines.append("stderr: " + self.stderr.strip()[-1500:])
        return "\n".join(lines)


def finding_text(finding: dict[str, Any]) -> str:
    """Everything a finding says (title, detail, evidence, remediation) as one string."""
    return json.dumps(finding, ensure_ascii=False)


def remediation_text(finding: dict[str, Any]) -> str:
    """The remediation part only (summary, commands, verify) as one string."""
    return json.dumps(finding.get("remediation") or {}, ensure_ascii=False)


def tool_command() -> list[str]:
    """How the tool is run: ``GFD_TOOL`` (a command line) or this interpreter's module."""
    import os
    import shlex

    custom = os.environ.get("GFD_TOOL")
    if custom:
        return shlex.split(custom)
    return [sys.executable, "-m", "fallback_doctor"]


def run_diagnose(stack: stacks.Stack, env: dict[str, str], *extra: str, timeout: float = 300) -> Diagnosis:
    """``fallback-doctor diagnose --python <stack python> --json --quick`` with the scenario's env.

    --quick: these scenarios check the static diagnosis against ONNX Runtime's own behaviour;
    the test inference has its own tests (tests/core/inference, and the full-diagnosis scenario).
    Pass ``"--full"`` in ``extra`` to run the whole diagnosis with the test inference instead.
    """
    quick = () if "--full" in extra else ("--quick",)
    extra = tuple(item for item in extra if item != "--full")
    cmd = [*tool_command(), "diagnose", "--python", str(stack.python_exe), "--json", *quick, *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise AssertionError(
            f"diagnose did not print one JSON document (rc={proc.returncode}): {exc}\n"
            f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-3000:]}"
        ) from exc
    return Diagnosis(doc, proc.returncode, proc.stderr, cmd)


def bareun_like_document(where: Path, provider: str) -> tuple[Path, dict[str, Any]]:
    """The root of a Bareun-like installation made under ``where`` that asks for ``provider``, whose
    libPath holds a CPU-only ONNX Runtime and whose licence file is missing, and its
    ``diagnose --json --quick`` document."""
    import os

    sys.path.insert(0, str(Path(__file__).parents[1] / "core" / "targets"))
    from bareun_layout import SAMPLE_CONFIG, make_install

    root = make_install(where, config={**SAMPLE_CONFIG, "executionProvider": {"provider": provider}})
    (root / "var" / "license.pem").unlink()  # "Register the API key: run the server binary …"
    env = {k: v for k, v in os.environ.items() if k not in ("BAREUN_ROOT", "LD_LIBRARY_PATH")}
    done = subprocess.run(
        [*tool_command(), "diagnose", "--target", "bareun", "--bareun-root", str(root), "--json", "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    return root, json.loads(done.stdout)
