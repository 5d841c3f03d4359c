"""The environment a collector may read: the allowlist of resources/redaction/environment.json.

``relevant_environment`` keeps the variables that change how the CUDA libraries are found and
which GPU is visible; ``service_environment`` puts a running server's own variables in place of
the technician's. The allowlist itself is data (core/readers/knowledge/environment.py), shared with the
bundle's redaction. By hand: ``env | grep -E '^(CUDA|NVIDIA|ORT|BAREUN)_|^LD_'``.
"""

from __future__ import annotations

from collections.abc import Mapping

from fallback_doctor.core.readers.knowledge.environment import allowlist


def service_environment(shell: Mapping[str, str], service: Mapping[str, str] | None) -> dict[str, str]:
    """The environment to diagnose with: the shell's, with every loader-relevant variable replaced
    by the service's own (the technician's LD_LIBRARY_PATH is not the server's).

    ``service`` None (the process was not found or its environment not read) keeps the shell's.
    """
    if service is None:
        return dict(shell)
    allowed = allowlist()
    merged = {key: value for key, value in shell.items() if not allowed.allows(key)}
    merged.update(service)
    return merged
