"""Whether CUDA_VISIBLE_DEVICES leaves CUDA any GPU: the one rule, for the shell's environment
(checks/device.py) and the running server's own (checks/process.py).

CUDA reads the list up to the first invalid entry (CUDA C Programming Guide, "CUDA Environment
Variables"): "" and "-1" hide everything, as does a first entry that is no valid index (beyond
the GPU count) or no known UUID prefix. Pure: it reads the value and the GPUs NVML listed.
"""

from __future__ import annotations

from fallback_doctor.core.model.snapshot import EnvironmentSnapshot


def hides_all_gpus(value: str, gpu_count: int | None, uuids: tuple[str, ...]) -> bool:
    """Whether CUDA_VISIBLE_DEVICES=``value`` leaves CUDA no device at all, on a machine with
    ``gpu_count`` GPUs (None: not known) whose UUIDs are ``uuids``.

    By hand: ``echo "[$CUDA_VISIBLE_DEVICES]"`` and ``nvidia-smi -L``.
    """
    first = value.split(",")[0].strip()
    if not first:
        return True
    if first.lstrip("-").isdigit():
        index = int(first)
        return index < 0 or (gpu_count is not None and index >= gpu_count)
    if first.startswith(("GPU-", "MIG-")):
        if not uuids or first.startswith("MIG-"):
            return False
        return not any(uuid.startswith(first) for uuid in uuids)
    return True


def hides_all_gpus_here(value: str, snapshot: EnvironmentSnapshot) -> bool:
    """hides_all_gpus against the GPUs NVML listed on this machine (count unknown without NVML)."""
    driver = snapshot.driver
    known = driver is not None and driver.nvml_status == "ok"
    gpus = driver.gpus if driver is not None and known else ()
    return hides_all_gpus(value, len(gpus) if known else None, tuple(gpu.uuid for gpu in gpus if gpu.uuid))
