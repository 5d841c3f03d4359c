"""Hypothesis strategies for every reader of outside input that this suite covers, and the readers.

Each reader is one entry of READERS: a name, a strategy for its input, the call, and the
exceptions that are its documented refusal (anything else is a crash). The crashes found by the
attack run of issue 10 are kept as explicit examples (EXAMPLES). Shared by the quick suite
(test_hostile_readers.py) and the slow one (10,000 examples per reader).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

PLANTS = [
    "password=hunter2",
    '"password": 987654321',
    '"licenseKey": 91827364',
    "user=alice",
    "USER=bob",
    "host=gpu",
    "hostname: cuda",
    "/home/nvidia/bareun",
    "http://host:8080/x",
    "koba-7Q2WX9-PLMNB4",
    "-----BEGIN PRIVATE KEY-----\nMIIE\n",
    "-----END PRIVATE KEY-----",
    "Authorization: Bearer abc.def.ghi123",
    "10.20.30.40",
    "fe80::20c:29ff:fe9a:1b2c",
    "00:0c:29:9a:1b:2c",
    "GPU-5f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
    "alice.kim@example.co.kr",
    "\\u0070assword=x",
    "%2Fhome%2Falice",
    "\\\\u00",
    "%",
    "\\",
    "::",
    "onnxruntime::Provider",
    "\x1b]0;PWNED\x07",
    "\ud800",
    "İ",
    "serial: 1324921000123",
    "--token t0k3n",
    "<password>x</password>",
]
"""Pieces the redactor's detectors look for (and their edges), mixed into random text."""

texts = st.lists(st.sampled_from(PLANTS) | st.text(max_size=24), max_size=12).map(
    lambda parts: " ".join(parts)
)
"""Text the redactor meets in logs and configuration: plants among random words."""

_short_texts = st.lists(st.sampled_from(PLANTS) | st.text(max_size=16), max_size=4).map(
    lambda parts: " ".join(parts)
)
"""A value's text: fewer parts than a log line's, so that a JSON document of them is cheap to draw."""

_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | _short_texts
_key = st.sampled_from(
    ["password", "licenseKey", "hostname", "user", "id", "verdict", "env", "uuid"]
) | st.text(max_size=12)
json_values = st.recursive(
    _leaf,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_key, children, max_size=5),
    max_leaves=8,
)
"""JSON values (a bareun.json, a report document's parts)."""

bareun_json = st.dictionaries(_key, json_values, max_size=6).map(lambda value: json.dumps(value))
"""bareun.json texts, surrogates and escapes included (json.dumps writes them as \\uXXXX)."""


@st.composite
def report_documents(draw: st.DrawFn) -> dict[str, Any]:
    """Report-shaped documents with hostile strings wherever a value goes."""
    return {
        "schema": "gpu-fallback-doctor/report",
        "schema_version": draw(st.sampled_from([1, 2, "1", 1.0, None])),
        "verdict": draw(st.sampled_from(["gpu_unusable", "gpu_verified"]) | _short_texts),
        "environment": {
            "environment": draw(
                st.dictionaries(st.sampled_from(["PATH", "BAREUN_CRED", "ORT_PW", "CUDA_HOME"]), _short_texts)
            ),
            "target": draw(st.dictionaries(_key, json_values, max_size=4)),
        },
        "findings": draw(st.lists(st.dictionaries(_key, json_values, max_size=5), max_size=3)),
        "extra": draw(json_values),
    }


# --- /proc, systemd, docker -----------------------------------------------------------------------

_path = st.sampled_from(
    ["/usr/lib/libcudart.so.12", "/opt/x/libonnxruntime.so.1.20.1", "/lib/libcuda.so.1"]
) | (st.text(max_size=40).map(lambda value: "/" + value))
maps_text = st.lists(
    st.tuples(st.text(max_size=12), _path, st.booleans()).map(
        lambda row: f"7f00-7f01 r-xp 00000000 08:01 {len(row[0])} {row[1]}" + (" (deleted)" if row[2] else "")
    )
    | st.text(max_size=60),
    max_size=20,
).map("\n".join)
environ_bytes = st.lists(
    st.binary(max_size=30) | st.sampled_from([b"A=1", b"=x", b"LD_LIBRARY_PATH=/x"]), max_size=10
).map(b"\0".join)
cgroup_text = st.lists(
    st.sampled_from(
        ["0::/system.slice/bareun.service", "12:pids:/docker/" + "a" * 64, "0::/kubepods/x", "1:x"]
    )
    | st.text(max_size=40),
    max_size=6,
).map("\n".join)
systemd_text = st.lists(
    st.sampled_from(
        ["[Service]", 'Environment=A=1 "B=two words"', "Environment=", "EnvironmentFile=-/etc/x", "x\\"]
    )
    | st.text(max_size=40),
    max_size=10,
).map("\n".join)
docker_text = json_values.map(lambda value: json.dumps(value)) | st.text(max_size=40)


# --- bundles as zips ------------------------------------------------------------------------------


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _zip_needing_version(version: int) -> bytes:
    """A valid bundle-like zip whose first central directory entry needs zip version ``version``/10."""
    data = bytearray(_zip({"manifest.json": b"{}", "report.json": b"{}"}))
    central = data.find(b"PK\x01\x02")
    data[central + 6] = version  # "version needed to extract", low byte
    return bytes(data)


_MANIFEST = {"schema": "gpu-fallback-doctor/bundle", "schema_version": 1, "members": []}


@st.composite
def bundle_zips(draw: st.DrawFn) -> bytes:
    """Zips that look like bundles: a manifest and a report with hostile fields, or mutated bytes."""
    report = draw(report_documents())
    manifest = dict(_MANIFEST)
    if draw(st.booleans()):
        manifest = draw(
            st.dictionaries(st.sampled_from(["schema", "schema_version", "members"]), json_values)
        )
    members = {
        "manifest.json": json.dumps(manifest, default=str).encode("utf-8", "surrogatepass"),
        "report.json": json.dumps(report, default=str).encode("utf-8", "surrogatepass"),
    }
    extra = draw(
        st.dictionaries(
            st.sampled_from(["logs/a.log", "../x", "/abs", "a\\b", "samples.csv"]),
            st.binary(max_size=64),
            max_size=3,
        )
    )
    members.update(extra)
    data = _zip(members)
    mutation = draw(st.sampled_from(["none", "flip", "truncate", "prefix"]))
    if mutation == "flip" and data:
        index = draw(st.integers(0, len(data) - 1))
        data = data[:index] + bytes([data[index] ^ draw(st.integers(1, 255))]) + data[index + 1 :]
    elif mutation == "truncate":
        data = data[: draw(st.integers(0, len(data)))]
    elif mutation == "prefix":
        data = draw(st.binary(max_size=16)) + data
    return data


# --- ELF, PE, ld.so.cache (core/loader: read-only for this suite) -----------------------------------


@st.composite
def elf_bytes(draw: st.DrawFn) -> bytes:
    ident = (
        b"\x7fELF"
        + bytes([draw(st.sampled_from([1, 2, 0, 3])), draw(st.sampled_from([1, 2, 0])), 1])
        + bytes(9)
    )
    rest = draw(st.binary(min_size=0, max_size=256))
    header = struct.pack(
        "<HHIQQQIHHHHHH",
        3,
        62,
        1,
        0,
        draw(st.integers(0, 300)),
        0,
        0,
        64,
        56,
        draw(st.integers(0, 8)),
        64,
        0,
        0,
    )
    return ident + (header if draw(st.booleans()) else b"") + rest


pe_bytes = st.binary(max_size=200).map(lambda rest: b"MZ" + rest)
ldcache_bytes = st.sampled_from([b"glibc-ld.so.cache1.1", b"ld.so-1.7.0"]).flatmap(
    lambda magic: st.binary(max_size=300).map(lambda rest: magic + rest)
)
gzip_bytes = texts.map(lambda text: gzip.compress(text.encode("utf-8", "surrogatepass"))).flatmap(
    lambda data: st.integers(0, len(data)).map(lambda cut: data[:cut])
)


@dataclass(frozen=True)
class Reader:
    """One reader of outside input: its input, the call, and its documented refusals."""

    name: str
    strategy: st.SearchStrategy[Any]
    call: Callable[[Any], object]
    refusals: tuple[type[BaseException], ...] = ()
    examples: tuple[Any, ...] = field(default=())


def _redact_text(text: str) -> object:
    from fallback_doctor.core.redaction.redact import Redactor

    redactor = Redactor(use_local_identity=False)
    redactor.learn(text)
    result = redactor.redact(text)
    for redaction in result.redactions:
        assert 0 <= redaction.start <= redaction.end <= len(text)
    return result


def _redact_bareun(text: str) -> object:
    from fallback_doctor.core.redaction.redact import Redactor, redact_json_text

    result = redact_json_text(Redactor(use_local_identity=False), text)
    json.loads(result.text) if result.text.lstrip().startswith(("{", "[")) else None
    assert "987654321" not in result.text and "91827364" not in result.text
    return result


def _export(document: dict[str, Any]) -> object:
    from fallback_doctor.core.bundle.export import prepare_bundle
    from fallback_doctor.core.bundle.preview import BundleOptions, ExtraMember
    from fallback_doctor.core.bundle.write import build_bundle_bytes

    extras = [ExtraMember("bareun.json", json.dumps(document, default=str), "config")]
    preview = prepare_bundle(
        document, extras, BundleOptions(use_local_identity=False, created="2026-01-01T00:00:00+00:00")
    )
    data, _manifest = build_bundle_bytes(preview)
    return data


def _open_zip(data: bytes) -> object:
    import tempfile
    from pathlib import Path

    from fallback_doctor.core.bundle.safe_open import BundleRefusedError, open_bundle

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "b.zip")
        path.write_bytes(data)
        try:
            opened = open_bundle(path)
        except BundleRefusedError:
            return None
        from fallback_doctor.core.views.text_report import render_text

        return render_text(opened.document, "en")


def _proc(parse: str) -> Callable[[Any], object]:
    """``module.function`` of core/collect, imported when first called."""
    module, function = parse.split(".")

    def call(value: Any) -> object:
        import importlib

        return getattr(importlib.import_module(f"fallback_doctor.core.readers.collect.{module}"), function)(
            value
        )

    return call


def _loader(module: str, function: str) -> Callable[[Any], object]:
    def call(value: Any) -> object:
        import importlib

        return getattr(importlib.import_module(f"fallback_doctor.core.readers.loader.{module}"), function)(
            value
        )

    return call


def _to_text(data: bytes) -> object:
    from fallback_doctor.core.bundle.content import to_text

    return to_text(data, 64 * 1024)


# --- log files (every encoding, gzip, rotations) and bareun.json's own parser ---------------------

_log_line = st.sampled_from(
    [
        "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:1295 CreateExecutionProviderFactoryInstance] "
        "Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*.",
        "Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.12: cannot open",
        '{"log":"EP Error x\\n","stream":"stderr","time":"2026-01-01T00:00:00Z"}',
        "\x1b[31mERROR\x1b[0m CUDA failure 35: CUDA driver version is insufficient",
        "Bareun server started",
    ]
) | st.text(max_size=60)
_log_text = st.lists(_log_line, max_size=12).map("\n".join)
log_bytes = st.tuples(
    _log_text,
    st.sampled_from(["utf-8", "utf-16", "utf-16-le", "cp949", "latin-1"]),
    st.sampled_from(["plain", "gzip", "cut gzip", "bytes"]),
    st.binary(max_size=64),
).map(lambda parts: _encode_log(*parts))
"""Log file contents: ONNX Runtime's lines among random text, in an encoding, maybe gzip'd (whole,
cut short) or plain random bytes."""


def _encode_log(text: str, encoding: str, wrapping: str, noise: bytes) -> bytes:
    data = text.encode(encoding, "replace") if encoding != "utf-8" else text.encode("utf-8", "surrogatepass")
    if wrapping == "bytes":
        return noise + data[: len(noise)]
    if wrapping.endswith("gzip"):
        data = gzip.compress(data, mtime=0)
        if wrapping == "cut gzip":
            data = data[: max(1, len(data) - 1 - len(noise) % 8)]
    return data


class _LogFolder:
    """One temporary folder for the log reader's files, made once (not per example)."""

    folder: str | None = None

    @classmethod
    def path(cls, name: str) -> str:
        import atexit
        import shutil
        import tempfile

        if cls.folder is None:
            cls.folder = tempfile.mkdtemp(prefix="gfd-hostile-logs-")
            atexit.register(shutil.rmtree, cls.folder, ignore_errors=True)  # /tmp kept one per run
        return f"{cls.folder}/{name}"


def _read_log_file(data: bytes) -> object:
    from fallback_doctor.core.readers.logs.diagnose_log import explain_texts
    from fallback_doctor.core.readers.logs.rotation import read_log

    gzipped = data[:2] == b"\x1f\x8b"
    current = _LogFolder.path("app.log")
    rotated = _LogFolder.path("app.log.1.gz" if gzipped else "app.log.1")
    for stale in ("app.log.1", "app.log.1.gz"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(_LogFolder.path(stale))
    with open(current, "wb") as handle:
        handle.write(b"" if gzipped else data)
    with open(rotated, "wb") as handle:
        handle.write(data)
    return explain_texts(read_log(current, budget=16 * 1024))


def _read_bareun_config(data: bytes) -> object:
    from fallback_doctor.core.readers.targets.bareun_config import read_config_bytes

    config = read_config_bytes("/srv/bareun/bareun.json", data, {"BAREUN_ROOT": "/srv/bareun"}, "/srv/bareun")
    for issue in config.issues:
        assert issue.line is None or issue.line >= 1, issue
    return config


bareun_config_bytes = st.one_of(
    bareun_json.map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.tuples(bareun_json, st.integers(0, 400), st.binary(max_size=8)).map(
        lambda parts: parts[0].encode("utf-8", "surrogatepass")[: parts[1]] + parts[2]
    ),
    st.binary(max_size=200),
)
"""bareun.json files: whole, cut anywhere with junk after, or any bytes (a BOM, UTF-16, NULs)."""


def _parse_listing(stdout: str) -> object:
    from fallback_doctor.core.readers.collect.python_env import parse_python_env

    return parse_python_env(stdout, "/srv/app/bin/python")


listing_text = st.one_of(
    json_values.map(lambda value: json.dumps(value)),
    st.fixed_dictionaries(
        {"version": json_values, "prefix": json_values, "platform": json_values},
        optional={"distributions": json_values, "site_packages": json_values, "sys_path": json_values},
    ).map(lambda value: "noise before\n" + json.dumps(value)),
    st.text(max_size=60),
)
"""What the package-listing child prints: its JSON object (any field of any type), or anything."""


def _read_library_version(data: bytes) -> object:
    import tempfile

    from fallback_doctor.core.readers.targets.libpath import version_from_file

    with tempfile.TemporaryDirectory(prefix="gfd-hostile-") as folder:
        path = os.path.join(folder, "libonnxruntime.so.1")
        with open(path, "wb") as handle:
            handle.write(data)
        version, how = version_from_file(path)
    assert (version is None) != (how is None) or version is not None, (version, how)
    return version


library_bytes = st.lists(
    st.sampled_from([b"VERS_1.23.2\x00", b"VERS_1.\x00", b"VERS_", b"\x7fELF", b"\x00" * 7])
    | st.binary(max_size=24),
    max_size=12,
).map(b"".join)
"""A library's bytes, with or without ONNX Runtime's ``VERS_<version>`` string (cut, repeated)."""


def _read_samples_csv(text: str) -> object:
    from fallback_doctor.core.bundle.replay import series_from_samples_csv
    from fallback_doctor.core.readers.sampling.sampler import SamplingSeries

    series_from_samples_csv(text, {}, "a bundle from another machine")  # what the wizard draws
    return SamplingSeries.from_csv(text, provenance="a bundle from another machine")


samples_csv = st.lists(
    st.sampled_from(["timestamp,utilization_percent,phase", "1.5,99,gpu.timed", "x,,", '"', "nan,inf,"])
    | st.text(max_size=30),
    max_size=8,
).map("\n".join)
"""samples.csv of a bundle: header, rows, quotes, numbers that are not."""


def _fleet_row(status: object) -> object:
    from pathlib import Path

    from fallback_doctor.core.fleet.hosts import _row_from_status

    if not isinstance(status, dict):
        status = {"state": status}
    return _row_from_status("host-1", status, Path("/nonexistent-fleet-folder"))


fleet_status = json_values | st.fixed_dictionaries(
    {}, optional={"state": json_values, "message": json_values, "rc": json_values, "bundle": json_values}
)
"""A fleet status file's document (any field of any type)."""


def _refusals() -> dict[str, tuple[type[BaseException], ...]]:
    from fallback_doctor.core.readers.collect.errors import CollectError
    from fallback_doctor.core.readers.loader.elf import NotAnElfFile
    from fallback_doctor.core.readers.loader.ldcache import LdCacheParseError
    from fallback_doctor.core.readers.loader.pe import NotAPeFile
    from fallback_doctor.core.readers.logs.reader import LogReadError

    return {
        "listing": (CollectError,),
        "elf": (NotAnElfFile,),
        "pe": (NotAPeFile,),
        "ldcache": (LdCacheParseError,),
        "log": (LogReadError,),
    }


def readers() -> list[Reader]:
    """Every reader of this suite (built lazily: the loader's exception types are imported here)."""
    from strategies_fleet import fleet_readers

    refusals = _refusals()
    return [
        Reader(
            "redactor on log text", texts, _redact_text, examples=("password=\ud800", "%" * 40, "\\u" * 30)
        ),
        Reader(
            "bareun.json through the redactor",
            bareun_json,
            _redact_bareun,
            examples=(
                '{"password": 987654321, "licenseKey": 91827364, "note": "x\\ud800y"}',
                # Found by the 10,000-example run: a harmless key's value opening a secret pair.
                '{"password": {"hostname": "A= \\"password\\": 987654321"}}',
            ),
        ),
        Reader("report document through export", report_documents(), _export),
        Reader(
            "bundle zip: open and show",
            bundle_zips(),
            _open_zip,
            # Found by the 10,000-example run: a central directory entry whose "version needed to
            # extract" byte says 8.4 (zipfile raises NotImplementedError while opening).
            examples=(_zip_needing_version(84),),
        ),
        Reader("/proc/PID/maps", maps_text, _proc("proc_maps.parse_maps")),
        Reader("/proc/PID/environ", environ_bytes, _proc("proc_files.parse_environ")),
        Reader("/proc/PID/cgroup", cgroup_text, _proc("proc_files.parse_cgroup")),
        Reader("systemctl show", systemd_text, _proc("systemd.parse_systemctl_show")),
        Reader("unit file", systemd_text, _proc("systemd.parse_unit_file")),
        Reader("EnvironmentFile", systemd_text, _proc("systemd.parse_env_file")),
        Reader(
            "docker inspect",
            docker_text,
            _proc("docker_inspect.parse_docker_inspect"),
            (ValueError,),
            # Found by the 10,000-example run (commit d92527e): a Config of another type.
            examples=('[{"Config": 1}]', '[{"HostConfig": {"DeviceRequests": [1]}}]'),
        ),
        Reader("ELF dynamic section", elf_bytes(), _loader("elf", "parse_elf_dynamic"), refusals["elf"]),
        Reader("PE imports", pe_bytes, _loader("pe", "parse_pe_imports"), refusals["pe"]),
        Reader("ld.so.cache", ldcache_bytes, _loader("ldcache", "parse_ld_so_cache"), refusals["ldcache"]),
        Reader("bundle member text (gzip, UTF-16)", gzip_bytes, _to_text, (ValueError, EOFError)),
        Reader("log file and its rotation (encodings, gzip)", log_bytes, _read_log_file, refusals["log"]),
        Reader("bareun.json configuration parser", bareun_config_bytes, _read_bareun_config),
        Reader("package listing (the child's output)", listing_text, _parse_listing, refusals["listing"]),
        Reader("library version (VERS_ in the file's bytes)", library_bytes, _read_library_version),
        Reader(
            "samples.csv of a bundle",
            samples_csv,
            _read_samples_csv,
            (ValueError,),
            # Found by the 10,000-example run: a lone CR in a row (csv.Error before).
            examples=("timestamp,phase\n1.5\r2,x", '"\r'),
        ),
        Reader("fleet status file", fleet_status, _fleet_row),
        *fleet_readers(),
    ]
