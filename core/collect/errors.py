"""The exception a collector raises when its facts cannot be collected (with a sentence why)."""

from __future__ import annotations


class CollectError(Exception):
    """A collector could not collect its facts; ``str(error)`` is a sentence for people."""
