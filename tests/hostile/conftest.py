"""The 10,000-example runs happen when asked for: ``pytest -m slow tests/hostile`` (or GFD_HOSTILE_SLOW=1).

``make test`` asks for them in its second pytest run (``make test-slow``, on every core); its first
run tries each reader a hundred times and skips these.
"""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    asked = "slow" in (config.option.markexpr or "") or os.environ.get("GFD_HOSTILE_SLOW") == "1"
    if asked:
        return
    skip = pytest.mark.skip(reason="10,000 examples per reader: run with -m slow (or GFD_HOSTILE_SLOW=1)")
    for item in items:
        if "10000_examples" in item.name:
            item.add_marker(skip)
