"""A planted-secrets bundle made by the real CLI: every member decoded, every planted value searched for.

A Bareun installation holds secrets and identities in every form the attack run used: numbers in
bareun.json, allowlisted variables the secret detector misses, lowercase ``user=`` in a plain and
a gzipped log, a UTF-16 log, JSON escapes and URL encoding, host and user names that are
ordinary words (gpu, cuda, host, nvidia), a log folder with a symlink to /etc/shadow, a FIFO
and a binary file. ``fallback-doctor diagnose --bundle`` makes the bundle; each member is read
gunzipped, as UTF-8/UTF-16/UTF-32, with JSON escapes, HTML entities and URL encoding undone, and
searched. 0 leaks; the bundle opens again with our own words intact.
"""

from __future__ import annotations

import codecs
import gzip
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "core" / "bundle"))
from bundle_plants import leaks_in_zip, readings

PLANTED = {
    "numeric password": "987654321",
    "numeric license": "91827364",
    "BAREUN_CRED": "credVALUE4471",
    "ORT_PW": "ortPW55190",
    "plain user=": "maltheuser",
    "gzip user=": "gzipuserqq",
    "utf16 password": "utf16Secr3t",
    "escaped password": "escPw0rd77",
    "url password": "urlSecretZ9",
    "api key": "koba-7Q2WX9-PLMNB4-RT6YZZ",
    "email": "kim.tech@example.co.kr",
    "ipv4": "10.20.30.40",
    "shadow hash": "$6$rounds=5000$",
}
"""Values that must appear nowhere in the bundle, in any decoding."""

IN_CONTEXT = {
    "host gpu": ['"hostname": "gpu"', "hostname: gpu", "host=gpu"],
    "host cuda": ["host=cuda", "server=cuda"],
    "user nvidia": ["/home/nvidia/", "home%2Fnvidia", "USER=nvidia", "user=nvidia"],
    "url host": ["://host:", "://host/"],
}
"""Ordinary-word identities: gone from where they were planted (the words themselves stay ours)."""


def _bareun(base: Path) -> Path:
    root = base / "bareun"
    for folder in ("config", "lib", "var/logs", "var/other"):
        (root / folder).mkdir(parents=True)
    config = {
        "version": 3000000,
        "password": int(PLANTED["numeric password"]),
        "licenseKey": int(PLANTED["numeric license"]),
        "hostname": "gpu",
        "apiKey": PLANTED["api key"],
        "database": f"postgres://bareun:{PLANTED['url password']}@host:5432/bareun",
        "libPath": "${BAREUN_ROOT}/lib",
        "logPath": "${BAREUN_ROOT}/var/logs",
        "modelPath": "/home/nvidia/bareun/models",
        "contact": PLANTED["email"],
        "executionProvider": {"provider": "cuda"},
    }
    (root / "config" / "bareun.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    logs = root / "var" / "logs"
    (logs / "bareun.log").write_text(
        "2025/11/03 09:14:21 bareun server 3.1.0 starting\n"
        f"2025/11/03 09:14:21 login user={PLANTED['plain user=']} from {PLANTED['ipv4']}\n"
        "2025/11/03 09:14:21 peer host=cuda server=cuda user=nvidia\n"
        "2025/11/03 09:14:22 models in /home/nvidia/bareun/models, see http://host:8080/status\n"
        f'2025/11/03 09:14:22 request {{"msg": "x", "pass\\u0077ord": "{PLANTED["escaped password"]}"}}\n'
        "2025/11/03 09:14:22 GET /api?path=%2Fhome%2Fnvidia%2Fx\n"
        "2025/11/03 09:14:22 falling back to CPU execution provider\n",
        encoding="utf-8",
    )
    (logs / "bareun.log.1.gz").write_bytes(
        gzip.compress(f"old line user={PLANTED['gzip user=']} USER=nvidia\n".encode())
    )
    (logs / "server-utf16.log").write_bytes(
        codecs.BOM_UTF16_LE + f"password={PLANTED['utf16 password']} hostname: gpu\n".encode("utf-16-le")
    )
    (logs / "shadow.log").symlink_to("/etc/shadow")
    (logs / "escape.log").symlink_to(root / "var" / "other" / "elsewhere.log")
    (root / "var" / "other" / "elsewhere.log").write_text("outside the log folder\n", encoding="utf-8")
    (logs / "core.log").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(200))
    os.mkfifo(logs / "pipe.log")
    return root


def _bundle(tmp_path: Path, root: Path, *logs: str) -> Path:
    target = tmp_path / "planted.zip"
    env = {
        **os.environ,
        "BAREUN_CRED": PLANTED["BAREUN_CRED"],
        "ORT_PW": PLANTED["ORT_PW"],
        "HOME": str(tmp_path / "home"),
    }
    arguments = [sys.executable, "-m", "fallback_doctor", "diagnose", "--target", "bareun"]
    arguments += ["--bareun-root", str(root), "--quick", "--bundle", str(target)]
    for log in logs:
        arguments += ["--log", log]
    done = subprocess.run(arguments, capture_output=True, timeout=180, env=env, check=False)
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    assert target.is_file(), done.stderr.decode(errors="replace")
    return target


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if not sys.platform.startswith("linux"):
        pytest.skip("FIFOs and /etc/shadow: Linux")
    base = tmp_path_factory.mktemp("planted")
    root = _bareun(base)
    logs = root / "var" / "logs"
    named = [str(logs / name) for name in ("bareun.log", "bareun.log.1.gz", "server-utf16.log", "shadow.log")]
    named += [str(logs / name) for name in ("escape.log", "core.log")]
    return root, _bundle(base, root, *named)


def test_the_plants_are_in_the_inputs(planted: tuple[Path, Path]) -> None:
    """Guard against a vacuous test: the values are really where the bundle reads from."""
    root, _bundle_path = planted
    text = (root / "config" / "bareun.json").read_text() + (root / "var" / "logs" / "bareun.log").read_text()
    for label in ("numeric password", "numeric license", "plain user=", "escaped password", "url password"):
        assert PLANTED[label] in text, label


def test_no_planted_value_in_any_member_in_any_decoding(planted: tuple[Path, Path]) -> None:
    _root, bundle = planted
    assert leaks_in_zip(bundle, PLANTED) == []


def test_ordinary_word_identities_are_gone_from_where_they_were(planted: tuple[Path, Path]) -> None:
    _root, bundle = planted
    leaks: list[str] = []
    with zipfile.ZipFile(bundle) as archive:
        for info in archive.infolist():
            texts = readings(archive.read(info))
            for label, contexts in IN_CONTEXT.items():
                leaks += [
                    f"{label}: {c!r} in {info.filename}" for c in contexts if any(c in t for t in texts)
                ]
    assert leaks == []


def test_only_the_applications_logs_are_taken_and_the_rest_is_said(planted: tuple[Path, Path]) -> None:
    _root, bundle = planted
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
        manifest = json.loads(archive.read("manifest.json"))
    logs = sorted(name for name in names if name.startswith("logs/"))
    assert all(
        not name.startswith(("logs/shadow", "logs/escape", "logs/core", "logs/pipe")) for name in logs
    ), logs
    said = " ".join(cut["why"] for cut in manifest["cut"])
    assert "credential" in said  # /etc/shadow
    assert "symlink that leaves the log folder" in said
    assert "not a text file" in said


def test_special_files_are_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO (nobody writes to it), a socket, a device, a folder: refused at once, saying what it is."""
    import socket
    import time

    from fallback_doctor.core.bundle.sources import read_source

    fifo = tmp_path / "app.log"
    os.mkfifo(fifo)
    rotated = tmp_path / "app.log.1"
    os.mkfifo(rotated)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock.log"))
    (tmp_path / "dir.log").mkdir()
    (tmp_path / "dev.log").symlink_to("/dev/zero")
    expected = {
        "app.log": "a FIFO",
        "app.log.1": "a FIFO",
        "sock.log": "a socket",
        "dir.log": "a folder",
        "dev.log": "refused",
    }
    for name, why in expected.items():
        started = time.monotonic()
        read = read_source(str(tmp_path / name), 1024, kind="log", tail=True)
        assert time.monotonic() - started < 5
        assert read.data is None and read.refused is not None and why in read.refused, (name, read)
    server.close()


def test_the_bundle_opens_with_our_own_words_intact(planted: tuple[Path, Path]) -> None:
    from fallback_doctor.core.bundle.safe_open import open_bundle

    _root, bundle = planted
    opened = open_bundle(bundle)
    document = opened.document
    assert document["schema"] == "gpu-fallback-doctor/report"
    assert document["verdict"] in ("gpu_unusable", "gpu_at_risk", "no_problem_found", "cpu_by_configuration")
    for finding in document["findings"]:
        assert "host-" not in finding["id"] and "user-" not in finding["id"], finding["id"]
        assert "host-" not in str(finding.get("cause")), finding
    environment = document["environment"]["environment"]
    assert environment.get("BAREUN_CRED") == "[REDACTED]"
    assert environment.get("ORT_PW") == "[REDACTED]"


def test_a_log_folder_of_etc_takes_nothing(tmp_path: Path) -> None:
    """logPath set to /etc: the server's log folder is a system folder; nothing of it is taken."""
    root = tmp_path / "bareun"
    (root / "config").mkdir(parents=True)
    (root / "config" / "bareun.json").write_text(
        json.dumps({"logPath": "/etc", "libPath": "${BAREUN_ROOT}/lib"}), encoding="utf-8"
    )
    bundle = _bundle(tmp_path, root)
    with zipfile.ZipFile(bundle) as archive:
        assert [name for name in archive.namelist() if name.startswith("logs/")] == []
        blob = b"".join(archive.read(info) for info in archive.infolist())
    assert b"root:" not in blob and b"$6$" not in blob
