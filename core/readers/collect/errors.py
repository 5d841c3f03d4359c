"""The exception a collector raises when its facts cannot be collected (with a sentence why)."""

from __future__ import annotations


class CollectError(Exception):
    """A collector could not collect its facts; ``str(error)`` is a sentence for people.

    ``outside``: its probe was ended from outside the tool ("killed" or "busy",
    core/readers/probes/outside.py), which says nothing about what it was collecting.
    """

    def __init__(self, message: str, outside: str | None = None) -> None:
        super().__init__(message)
        self.outside = outside
