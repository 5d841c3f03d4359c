"""Which environment variables may be read and may leave the machine, as data (resources/redaction).

The collectors keep only these variables (the loader's, CUDA's, ONNX Runtime's, Bareun's …), and
a bundle keeps the value of a variable only when its name is one whose value is known to be a
setting; an allowed name of a family (``BAREUN_CRED``, ``ORT_PW``) keeps its name and loses its
value there, whatever a secret detector makes of the name. By hand: ``env | grep -E '^(CUDA|ORT)_'``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from fallback_doctor.core.platform.resource_files import RESOURCES


@dataclass(frozen=True)
class EnvironmentAllowlist:
    """The allowlist: exact names, name families (prefixes), and the names whose values are kept."""

    names: frozenset[str]
    families: tuple[str, ...]
    known_values: frozenset[str]

    def allows(self, name: str) -> bool:
        """Whether the variable may be read and reported at all."""
        return name in self.names or any(
            name.startswith(prefix) and len(name) > len(prefix) and _is_name(name) for prefix in self.families
        )

    def keeps_value(self, name: str) -> bool:
        """Whether a bundle may keep the variable's value (still searched for secrets and identities)."""
        return name in self.names or name in self.known_values


def _is_name(name: str) -> bool:
    return name.replace("_", "a").isalnum() and name.isascii()


@cache
def allowlist() -> EnvironmentAllowlist:
    """The allowlist of resources/redaction/environment.json."""
    data = json.loads(RESOURCES.joinpath("redaction", "environment.json").read_text(encoding="utf-8"))
    return EnvironmentAllowlist(
        frozenset(data["names"]), tuple(data["families"]), frozenset(data["known_values"])
    )


def relevant_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables that change how CUDA libraries are found and which GPU is visible (sorted)."""
    allowed = allowlist()
    return {key: value for key, value in sorted(env.items()) if allowed.allows(key)}
