"""Run the driver/device/native collectors and the driver and device checks in a fresh process.

The dynamic loader reads LD_LIBRARY_PATH once, when a process starts, so a test that puts
a fake libnvidia-ml.so.1 on it must collect in a new process. Request (JSON, argv[1]):
{"root": "/", "native": ["libcudnn.so.9"], "native_timeout": 10,
 "ort_version": "1.23.2", "cuda_major": 12, "platform": ["Linux", "x86_64"]}
Prints one JSON object: the facts (dataclasses as dicts) and the findings.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys

from fallback_doctor.core.judgement.checks import device as device_checks
from fallback_doctor.core.judgement.checks import driver as driver_checks
from fallback_doctor.core.model.facts.onnxruntime import OrtFacts
from fallback_doctor.core.model.facts.platform import PlatformFacts
from fallback_doctor.core.model.snapshot import EnvironmentSnapshot
from fallback_doctor.core.readers.collect.device import collect_device
from fallback_doctor.core.readers.collect.driver import collect_driver
from fallback_doctor.core.readers.collect.native import collect_native


def main() -> None:
    request = json.loads(sys.argv[1])
    env = dict(os.environ)
    root = request.get("root", "/")
    driver = collect_driver(env, root=root)
    device = collect_device(env, root=root)
    native = None
    if request.get("native") is not None:
        native = collect_native(request["native"], env, sys.executable, request.get("native_timeout", 10))
    ort = None
    if request.get("cuda_major") is not None:
        ort = OrtFacts(
            distributions=(),
            package_dir=None,
            version=request.get("ort_version"),
            cuda_build_version=None,
            providers_in_build=("CUDAExecutionProvider",),
            provider_libraries=(),
            required_cuda_major=request["cuda_major"],
            required_cudnn_major=9,
            requirement_source="test",
        )
    system, machine = request.get("platform", ["Linux", "x86_64"])
    snapshot = EnvironmentSnapshot(
        platform=PlatformFacts(system=system, release="", machine=machine, os_name=None),
        onnxruntime=ort,
        driver=driver,
        device=device,
        native=native,
    )
    findings = []
    for check in driver_checks.CHECKS + device_checks.CHECKS:
        for finding in check(snapshot):
            findings.append(dataclasses.asdict(finding))
    print(
        json.dumps(
            {
                "driver": dataclasses.asdict(driver),
                "device": dataclasses.asdict(device),
                "native": dataclasses.asdict(native) if native is not None else None,
                "findings": findings,
            }
        )
    )


if __name__ == "__main__":
    main()
