"""Planted secrets and identities, a real report document carrying them, and a leak search over a zip.

Shared by the bundle tests (imported by file name: tests have no packages).
"""

from __future__ import annotations

import codecs
import gzip
import html
import json
import re
import sys
import urllib.parse
import zipfile
from pathlib import Path
from typing import Any

from fallback_doctor.core.bundle.preview import ExtraMember

USER = "alicekim"
HOST = "gpu-node-17"
SECRETS = {
    "password": "hunter2-Pa55word",
    "bareun": "koba-7Q2WX9-PLMNB4-RT6YZZ-81KQ3",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXZhbHVl",
    "pem": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
    "url_password": "Sup3rS3cretDB",
    "license": "LIC-9F3A-7781-XQZT",
    "token": "tok4f9a8b7c6d5e4f3a",
    "env_secret": "awsSECRETvalue998877",
    "redact_more": "ProjectNightingale",
}
IDENTITIES = {
    "user": USER,
    "host": HOST,
    "ipv4": "10.20.30.40",
    "ipv6": "fe80::20c:29ff:fe9a:1b2c",
    "mac": "00:0c:29:9a:1b:2c",
    "gpu_uuid": "GPU-5f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
    "serial": "1324921000123",
    "email": "alice.kim@example.co.kr",
}
PLANTED = {**SECRETS, **IDENTITIES}

PEM_BLOCK = (
    "-----BEGIN PRIVATE KEY-----\n"
    f"{SECRETS['pem']}\n"
    "ZXhhbXBsZWtleWRhdGFleGFtcGxla2V5ZGF0YWV4YW1wbGVrZXlkYXRh\n"
    "-----END PRIVATE KEY-----\n"
)


def planted_environment() -> dict[str, str]:
    """An environment as a server could have it: allowlisted and other variables, secrets among both."""
    return {
        "PATH": f"/home/{USER}/.local/bin:/usr/local/cuda/bin:/usr/bin",
        "LD_LIBRARY_PATH": f"/home/{USER}/bareun/lib:/usr/local/cuda/lib64",
        "CUDA_VISIBLE_DEVICES": IDENTITIES["gpu_uuid"],
        "BAREUN_API_KEY": SECRETS["bareun"],
        "LANG": "ko_KR.UTF-8",
        "AWS_SECRET_ACCESS_KEY": SECRETS["env_secret"],
        "HOSTNAME": HOST,
        "USER": USER,
        "HOME": f"/home/{USER}",
        "SSH_CONNECTION": f"{IDENTITIES['ipv4']} 51234 10.0.0.5 22",
    }


def real_document() -> dict[str, Any]:
    """A report document from a real (quick) diagnosis of this interpreter, with the planted environment."""
    from fallback_doctor.core.flow.diagnosis import DiagnoseRequest, diagnose, diagnosis_document
    from fallback_doctor.core.readers.collect.run import CollectRequest

    diagnosis = diagnose(
        DiagnoseRequest(
            collect=CollectRequest(python=sys.executable, env=planted_environment()),
            quick=True,
            target={"kind": "python", "python": sys.executable},
        )
    )
    return diagnosis_document(diagnosis)


def planted_document() -> dict[str, Any]:
    """The real document with identities and secrets placed where later collectors put facts."""
    document = real_document()
    environment = document["environment"]
    environment["target"] = {
        "kind": "bareun",
        "root": f"/home/{USER}/bareun",
        "config_path": f"/home/{USER}/bareun/conf/bareun.yml",
        "log_paths": [f"/home/{USER}/bareun/logs/bareun-{HOST}.log"],
        "lib_path": f"/home/{USER}/bareun/lib",
        "requested_provider": "cuda",
    }
    environment["process"] = {
        "pid": 4242,
        "executable": f"/home/{USER}/bareun/bin/bareun",
        "mapped_libraries": [f"/home/{USER}/bareun/lib/libonnxruntime.so.1.23.2"],
        "environment": planted_environment(),
    }
    environment["driver"]["gpus"] = [
        {
            "index": 0,
            "name": "NVIDIA A100-SXM4-40GB",
            "compute_capability": [8, 0],
            "memory_total_mib": 40960,
            "uuid": IDENTITIES["gpu_uuid"],
            "error": None,
        }
    ]
    document["findings"].append(
        {
            "id": "config.license",
            "cause": "config_cpu_requested",
            "layer": "config",
            "severity": "info",
            "title": f"Configuration read from /home/{USER}/bareun/conf/bareun.yml on {HOST}",
            "detail": f"The server at {IDENTITIES['ipv4']} ({IDENTITIES['mac']}) "
            f"reports to {IDENTITIES['email']}; "
            f"project {SECRETS['redact_more']}.",
            "evidence": [
                {"label": "licenseKey", "value": SECRETS["license"], "source": "bareun.yml", "line": 3},
                {"label": "serial", "value": IDENTITIES["serial"], "source": "nvidia-smi -q", "line": None},
                {"label": "listen", "value": f"[{IDENTITIES['ipv6']}]:5757", "source": None, "line": None},
            ],
            "remediation": {
                "summary": f"Edit /home/{USER}/bareun/conf/bareun.yml",
                "commands": [f"ssh {USER}@{HOST} sudo systemctl restart bareun"],
                "verify": None,
            },
            "texts": {},
        }
    )
    return document


def planted_extras() -> list[ExtraMember]:
    """Configuration, logs, probe output and samples carrying the plants in plain and hidden forms."""
    config = (
        f"# Bareun server on {HOST}\n"
        f"hostname: {HOST}\n"
        f"licenseKey: {SECRETS['license']}\n"
        f"apiKey: {SECRETS['bareun']}\n"
        f"password = {SECRETS['password']}\n"
        f"database: postgres://bareun:{SECRETS['url_password']}@db.corp.internal:5432/bareun\n"
        f"modelPath: /home/{USER}/bareun/models\n"
        f"tls_key: |\n  {PEM_BLOCK.replace(chr(10), chr(10) + '  ')}\n"
    )
    json_config = json.dumps(
        {
            "modelPath": f"/home/{USER}/models",
            "token": SECRETS["token"],
            "owner": USER,
            "note": f"contact {IDENTITIES['email']}",
        }
    ).replace("/", "\\/")
    json_config = json_config.replace(f'"{USER}"', '"\\u0061' + USER[1:] + '"')
    utf16_log = (
        f"2024-05-01 10:00:00 [I] started by {USER} on {HOST} pid 4242\n"
        f"2024-05-01 10:00:01 [I] GPU 0: {IDENTITIES['gpu_uuid']} "
        f"serial {IDENTITIES['serial']}\n"
        f"2024-05-01 10:00:02 [W] request from {IDENTITIES['ipv4']} "
        f"Authorization: Bearer {SECRETS['bearer']}\n"
        f"2024-05-01 10:00:03 [E] cannot open C:\\Users\\{USER}\\AppData\\bareun.log\n"
    )
    gzip_log = (
        f"eth0 {IDENTITIES['mac']} inet6 {IDENTITIES['ipv6']}\n{PEM_BLOCK}"
        f"mail to {IDENTITIES['email']} Serial Number : {IDENTITIES['serial']}\n"
    )
    encoded_log = (
        "GET /api?user="
        + urllib.parse.quote(IDENTITIES["email"], safe="")
        + "&path="
        + urllib.parse.quote(f"/home/{USER}/x", safe="")
        + "&key="
        + urllib.parse.quote(SECRETS["bareun"], safe="")
        + "&host="
        + urllib.parse.quote(HOST, safe="")
        + "\n"
        + json.dumps({"msg": f"user {USER} pw", "password": SECRETS["password"]}, ensure_ascii=True)
        .replace(USER, "\\u0061\\u006c" + USER[2:])
        .replace("/", "\\/")
        + "\n"
    )
    probe_stdout = (
        f"GPU UUID : {IDENTITIES['gpu_uuid']}\nSerial Number : {IDENTITIES['serial']}\n"
        f"Executable: /home/{USER}/bareun/bin/bareun\n"
    )
    probe_stderr = (
        f"running /home/{USER}/bin/probe --password {SECRETS['password']} --token={SECRETS['token']}\n"
    )
    samples = "timestamp,gpu_index,utilization_percent,probe_cpu_percent,pid\n" + "".join(
        f"{1700000000 + i * 0.1:.1f},0,{(i * 7) % 100},{(i * 13) % 400},4242\n" for i in range(50)
    )
    return [
        ExtraMember("bareun.yml", config, "config", f"/home/{USER}/bareun/conf/bareun.yml"),
        ExtraMember(
            "bareun.json", json_config.encode("utf-8"), "config", f"/home/{USER}/bareun/conf/bareun.json"
        ),
        ExtraMember(
            f"bareun-{HOST}.log",
            codecs.BOM_UTF16_LE + utf16_log.encode("utf-16-le"),
            "log",
            f"/var/log/{HOST}.log",
        ),
        ExtraMember(
            "rotated.log.1.gz", gzip.compress(gzip_log.encode("utf-8")), "log", "/var/log/rotated.log.1.gz"
        ),
        ExtraMember("access.log", encoded_log, "log", "/var/log/access.log"),
        ExtraMember("probe/as_is.stdout.txt", probe_stdout, "probe"),
        ExtraMember("probe/as_is.stderr.txt", probe_stderr, "probe"),
        ExtraMember("samples.csv", samples, "samples"),
    ]


# --------------------------------------------------------------------------------------------


def _unescape_json(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith("\\u") and len(token) == 6:
            return chr(int(token[2:], 16))
        return {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(token[1], token[1])

    return re.sub(r"\\u[0-9a-fA-F]{4}|\\.", one, text)


def readings(data: bytes) -> list[str]:
    """Every way a person or a tool could read ``data``: gunzipped, UTF-8/UTF-16/UTF-32, unescaped."""
    blobs = [data]
    while blobs[-1][:2] == b"\x1f\x8b" and len(blobs) < 4:
        blobs.append(gzip.decompress(blobs[-1]))
    texts: list[str] = []
    for blob in blobs:
        for encoding in ("utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "latin-1", "cp949"):
            texts.append(blob.decode(encoding, errors="ignore"))
            if encoding.startswith("utf-16"):
                texts.append(blob[1:].decode(encoding, errors="ignore"))
    more: list[str] = []
    for text in texts:
        layer = text
        for _ in range(3):
            layer = urllib.parse.unquote(html.unescape(_unescape_json(layer)))
            more.append(layer)
    return texts + more


def leaks_in_zip(path: Path, planted: dict[str, str]) -> list[str]:
    """Which planted values appear in any member (or member name, or comment) of the zip."""
    found: list[str] = []
    with zipfile.ZipFile(path) as archive:
        names = " ".join(info.filename for info in archive.infolist()) + archive.comment.decode("latin-1")
        contents = {info.filename: archive.read(info) for info in archive.infolist()}
    for label, value in planted.items():
        needle = value.lower()
        if needle in names.lower():
            found.append(f"{label} in a member name")
        for name, data in contents.items():
            if any(needle in text.lower() for text in readings(data)):
                found.append(f"{label} ({value}) in {name}")
    raw = path.read_bytes()
    for label, value in planted.items():
        for encoding in ("utf-8", "utf-16-le", "utf-16-be"):
            if value.encode(encoding) in raw:
                found.append(f"{label} in the zip's raw bytes ({encoding})")
    return found
