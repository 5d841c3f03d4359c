"""Which environment variables matter to the diagnosis: the loader's, CUDA's, ONNX Runtime's.

Kept apart from collect/run.py so that the process collector can use it without importing
the collector runner (which imports the process collector).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_ENV_ALLOW = re.compile(
    r"^(CUDA_\w*|NVIDIA_\w*|CUDNN_\w*|ORT_\w*|TENSORRT_\w*|TRT_\w*|LD_LIBRARY_PATH|LD_PRELOAD|PATH"
    r"|PYTHONPATH|PYTHONHOME|VIRTUAL_ENV|CONDA_PREFIX|LANG|LC_\w+|BAREUN_\w*|WSL_DISTRO_NAME)$"
)


def relevant_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables that change how CUDA libraries are found and which GPU is visible."""
    return {key: value for key, value in sorted(env.items()) if _ENV_ALLOW.match(key)}


def service_environment(shell: Mapping[str, str], service: Mapping[str, str] | None) -> dict[str, str]:
    """The environment to diagnose with: the shell's, with every loader-relevant variable replaced
    by the service's own (the technician's LD_LIBRARY_PATH is not the server's).

    ``service`` None (the process was not found or its environment not read) keeps the shell's.
    """
    if service is None:
        return dict(shell)
    merged = {key: value for key, value in shell.items() if not _ENV_ALLOW.match(key)}
    merged.update(service)
    return merged
