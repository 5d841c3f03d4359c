"""One C-API probe run: load the library, describe the model, the CPU baseline (the GPU side is in gpu.py)."""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
import time
from typing import Any

from .api import (
    ELEMENT_TYPES,
    ORT_LOGGING_LEVEL_VERBOSE,
    ORT_LOGGING_LEVEL_WARNING,
    Api,
    Declared,
    OrtError,
    Output,
    P,
    Request,
)
from .output import Capture, emit, now, step
from .stats import digest, latency, nodes_per_provider, ort_messages, untimed
from .tensors import Inputs, make_data, product, resolve_shape, run_once, session_io

# --- the probe ----------------------------------------------------------------------------------


class Probe:
    """One probe run: load the library, the CPU baseline, the GPU retry, the strict run."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.work_dir = request.get("work_dir") or tempfile.mkdtemp(prefix="gfd-capi-")
        self.own_work_dir = not request.get("work_dir")
        self.capture = Capture(self.work_dir)
        self.phases: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.log_excerpt: list[str] = []
        self.api: Api | None = None
        self.env = P()
        self.runtime: dict[str, Any] = {
            "pid": os.getpid(),
            "python_version": sys.version.split()[0],
            "interpreter": sys.executable,
            "ort_location": request.get("lib_path"),
        }
        self.cost: dict[str, Any] = {}
        self.model: dict[str, Any] | None = None
        self.inputs: list[Declared] = []
        self.output_names: list[str] = []
        self.buffers: list[bytes] = []
        self.cpu_outputs: list[Output] | None = None

    # phases
    def begin(self, name: str) -> None:
        """Start a phase: a PhaseMark, and fd 2 captured to its own file."""
        self.phases.append({"name": name, "start_s": now(), "end_s": None, "ok": None})
        self.capture.start(name)

    def end(self, ok: bool) -> list[str]:
        """End the current phase; return what ONNX Runtime wrote to stderr during it."""
        lines = self.capture.stop()
        mark = self.phases[-1]
        mark["end_s"] = now()
        mark["ok"] = ok
        emit({"event": "end", "phase": mark["name"], "ok": ok, "t": mark["end_s"]})
        seen = {untimed(line) for line in self.log_excerpt}
        for line in ort_messages(lines)[:20]:
            if untimed(line) not in seen:
                seen.add(untimed(line))
                self.log_excerpt.append(line)
        return lines

    # steps
    def load(self) -> bool:
        """dlopen the library, OrtGetApiBase, GetVersionString, GetApi, check the table."""
        lib_path = str(self.request.get("lib_path") or "")
        self.begin("import")
        started = time.monotonic()
        try:
            step("import", "loading %s" % lib_path)
            mode = getattr(os, "RTLD_NOW", 0) | getattr(os, "RTLD_LOCAL", 0)
            if sys.platform == "win32":
                library = ctypes.CDLL(lib_path, winmode=0)
            else:
                library = ctypes.CDLL(lib_path, mode=mode)
        except OSError as error:
            self.end(False)
            self.failure("start", "the ONNX Runtime library %s could not be loaded: %s" % (lib_path, error))
            return False
        try:
            step("import", "calling OrtGetApiBase in %s" % os.path.basename(lib_path))
            if not hasattr(library, "OrtGetApiBase"):
                raise RuntimeError("%s has no OrtGetApiBase: it is not an ONNX Runtime library" % lib_path)
            api = Api(library)
            self.runtime["ort_version"] = api.version
            step("import", "calling GetApi (ONNX Runtime %s)" % api.version)
            api.negotiate()
            step("import", "checking the OrtApi table (API %d)" % api.api_version)
            api.verify_table()
            self.runtime["available_providers"] = api.available_providers()
            self.runtime["build_info"] = "C API %d (library %s)" % (api.api_version, api.version)
            self.notes.append(
                "ONNX Runtime %s ran: the library %s, driven through its C API (API version %d)"
                % (api.version, lib_path, api.api_version)
            )
            self.notes.append(
                "the C API does not expose a session's active providers: they are inferred "
                "from ONNX Runtime's VERBOSE node placement lines and from the strict session"
            )
            step("import", "calling CreateEnv (VERBOSE)")
            api.call("CreateEnv", ORT_LOGGING_LEVEL_VERBOSE, b"gfd-capi-probe", ctypes.byref(self.env))
        except (RuntimeError, OrtError) as error:
            self.end(False)
            text = error.quoted() if isinstance(error, OrtError) else str(error)
            self.failure("error", text)
            return False
        self.api = api
        self.cost["import_s"] = time.monotonic() - started
        self.end(True)
        emit({"event": "runtime", "runtime": self.runtime})
        return True

    def failure(self, kind: str, sentence: str) -> None:
        """Record a failure the probe itself found (not a crash: the parent sees those)."""
        self.result_failure = {
            "kind": kind,
            "sentence": sentence,
            "phase": self.phases[-1]["name"] if self.phases else None,
        }
        emit({"event": "error", "kind": kind, "error": sentence})

    result_failure: dict[str, object] | None = None

    def session_options(self, verbose: bool) -> ctypes.c_void_p:
        """CreateSessionOptions with the thread cap (and VERBOSE session logging when asked)."""
        api = self.api
        assert api is not None
        options = P()
        api.call("CreateSessionOptions", ctypes.byref(options))
        threads = int(self.request.get("threads", 2) or 0)
        api.call("SetIntraOpNumThreads", options, threads)
        api.call("SetInterOpNumThreads", options, 1)
        api.call(
            "SetSessionLogSeverityLevel",
            options,
            ORT_LOGGING_LEVEL_VERBOSE if verbose else ORT_LOGGING_LEVEL_WARNING,
        )
        return options

    def create_session(self, options: ctypes.c_void_p, phase: str) -> tuple[ctypes.c_void_p, float]:
        """CreateSession from the model path; (session, seconds)."""
        api = self.api
        assert api is not None
        model = str(self.request["model"])
        path = model if sys.platform == "win32" else model.encode("utf-8")
        session = P()
        step(phase, "calling CreateSession on %s" % os.path.basename(model))
        started = time.monotonic()
        api.call("CreateSession", self.env, path, options, ctypes.byref(session))
        return session, time.monotonic() - started

    def describe_model(self, session: ctypes.c_void_p) -> bool:
        """Inputs and outputs from the session; the inputs built from the declared types and shapes."""
        api = self.api
        assert api is not None
        inputs, outputs = session_io(api, session)
        dims = {str(k): int(v) for k, v in (self.request.get("dims") or {}).items()}
        default_dim = int(self.request.get("default_dim", 1))
        problems = []
        for item in inputs:
            if item.get("error") or not ELEMENT_TYPES.get(item["element"], ("", "", 0))[1]:
                problems.append(
                    "input %r is of type %s, which this probe cannot make data for"
                    % (item["name"], item["dtype"])
                )
            planned = (self.request.get("shapes") or {}).get(item["name"])
            item["resolved"] = resolve_shape(item["shape"], dims, default_dim, planned)
        model = str(self.request["model"])
        size = os.path.getsize(model)
        sha = hashlib.sha256()
        with open(model, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                sha.update(block)
        first = inputs[0]["resolved"] if inputs else []
        self.model = {
            "path": model,
            "sha256": sha.hexdigest(),
            "size_bytes": size,
            "inputs": [
                {"name": i["name"], "dtype": i["dtype"], "shape": i["shape"], "resolved_shape": i["resolved"]}
                for i in inputs
            ],
            "outputs": [{"name": o["name"], "dtype": o["dtype"], "shape": o["shape"]} for o in outputs],
            "batch_size": first[0] if first else None,
        }
        emit({"event": "model", "model": self.model})
        if problems:
            self.failure("unusable_model", "the model cannot be run this way: " + "; ".join(problems))
            return False
        rng = random.Random(int(self.request.get("seed", 0)))
        self.inputs = inputs
        self.buffers = [make_data(i["element"], product(i["resolved"]), rng) for i in inputs]
        self.output_names = [o["name"] for o in outputs]
        return True

    def measure(self, session: ctypes.c_void_p, prefix: str) -> tuple[dict[str, object], list[Output]]:
        """Warm-up runs, then timed runs (run log at WARNING); latency and the last outputs."""
        api = self.api
        assert api is not None
        run_options = P()
        api.call("CreateRunOptions", ctypes.byref(run_options))
        api.call("RunOptionsSetRunLogSeverityLevel", run_options, ORT_LOGGING_LEVEL_WARNING)
        inputs = Inputs(api, self.inputs, self.buffers)
        try:
            warmup = int(self.request.get("warmup", 3))
            runs = max(1, int(self.request.get("runs", 20)))
            self.begin(prefix + ".warmup")
            step(prefix + ".warmup", "calling Run %d times (warm-up)" % warmup)
            outputs = run_once(api, session, run_options, inputs, self.output_names, keep=True)
            for _ in range(max(0, warmup - 1)):
                run_once(api, session, run_options, inputs, self.output_names, keep=False)
            self.end(True)
            self.begin(prefix + ".timed")
            step(prefix + ".timed", "calling Run %d times (timed)" % runs)
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                run_once(api, session, run_options, inputs, self.output_names, keep=False)
                times.append(time.perf_counter() - started)
            self.end(True)
            batch = self.model.get("batch_size") if self.model else None
            return latency(times, warmup, batch), outputs
        finally:
            inputs.release()
            api.release("RunOptions", run_options)

    def cpu_baseline(self) -> dict[str, Any]:
        """The CPU provider only: session, metadata, warm-up, timed runs, output digests."""
        api = self.api
        assert api is not None
        # stage and verdict grade GPU attempts: the CPU baseline keeps "runtime_loaded" / "not_run".
        run: dict[str, object] = {
            "stage": "runtime_loaded",
            "requested_providers": ["CPUExecutionProvider"],
            "verdict": "not_run",
        }
        self.begin("cpu.session")
        options = session = None
        try:
            options = self.session_options(verbose=True)
            session, seconds = self.create_session(options, "cpu.session")
            lines = self.end(True)
            run["session_create_s"] = seconds
            self.cost["cpu_session_create_s"] = seconds
            run["nodes_per_provider"] = nodes_per_provider(lines)
            run["nodes_source"] = (
                "verbose log" if run["nodes_per_provider"] else "no node placement lines in the log"
            )
            run["active_providers"] = ["CPUExecutionProvider"]
            if not self.describe_model(session):
                run["error"] = self.result_failure["sentence"] if self.result_failure else "unusable model"
                return run
            if not self.request.get("cpu_baseline", True):
                return run
            stats, outputs = self.measure(session, "cpu")
            run["latency"] = stats
            run["outputs"] = [digest(o) for o in outputs]
            self.cpu_outputs = outputs
            self.store_baseline(outputs)
        except OrtError as error:
            lines = self.end(False) if self.capture.saved is not None else []
            run["error"] = error.quoted()
            run["ort_messages"] = ort_messages(lines)
        finally:
            api.release("Session", session)
            api.release("SessionOptions", options)
        return run

    def store_baseline(self, outputs: list[Output]) -> None:
        """Write the CPU outputs (raw bytes + index) to baseline_dir for children that compare later."""
        folder = self.request.get("baseline_dir")
        if not folder:
            return
        os.makedirs(folder, exist_ok=True)
        index = []
        for number, output in enumerate(outputs):
            name = "capi-output-%d.bin" % number
            with open(os.path.join(folder, name), "wb") as handle:
                handle.write(output["data"])
            entry = {
                "name": output["name"],
                "element": output["element"],
                "dtype": output["dtype"],
                "shape": output["shape"],
                "file": name,
            }
            index.append(entry)
        with open(os.path.join(folder, "capi-outputs.json"), "w") as handle:
            json.dump(index, handle)

    def load_baseline(self) -> list[Output] | None:
        """The CPU outputs of an earlier child, from baseline_dir (None when there are none)."""
        folder = self.request.get("baseline_dir")
        if not folder or not os.path.exists(os.path.join(folder, "capi-outputs.json")):
            return None
        with open(os.path.join(folder, "capi-outputs.json")) as handle:
            index = json.load(handle)
        outputs: list[Output] = []
        for item in index:
            with open(os.path.join(folder, item["file"]), "rb") as handle:
                data = handle.read()
            outputs.append(
                {
                    "name": str(item["name"]),
                    "element": int(item["element"]),
                    "dtype": str(item["dtype"]),
                    "shape": [int(dim) for dim in item["shape"]],
                    "data": data,
                }
            )
        return outputs

    def finish(self) -> None:
        """ReleaseEnv; remove our own work folder."""
        if self.api is not None and self.env:
            self.api.release("Env", self.env)
            self.env = P()
        if self.own_work_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)
