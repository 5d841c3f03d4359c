"""A bounded, thread-safe ring buffer with sequence numbers, for a writer thread and readers.

Public API:

- ``RingBuffer[T](capacity)``: ``append(item) -> int`` (the item's sequence number, counting
  from 0 over the buffer's whole life), ``extend(items)``, ``snapshot() -> tuple[T, ...]``
  (oldest first), ``since(sequence) -> (items, next_sequence)`` for incremental readers (a
  GUI timer asks for what arrived since its last call), ``clear()``, ``len()``, and the
  counters ``appended`` (ever appended) and ``dropped`` (pushed out by newer items).

The oldest items fall out when full; the buffer never blocks the writer.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class RingBuffer(Generic[T]):
    """A fixed-capacity FIFO that drops its oldest items; every method takes one lock."""

    def __init__(self, capacity: int) -> None:
        """``capacity`` items at most (at least 1)."""
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity}")
        self._items: deque[T] = deque(maxlen=capacity)
        self._lock = threading.Lock()
        self._appended = 0
        self._capacity = capacity

    @property
    def capacity(self) -> int:
        """The most items the buffer holds."""
        return self._capacity

    @property
    def appended(self) -> int:
        """How many items were ever appended (the next item's sequence number)."""
        with self._lock:
            return self._appended

    @property
    def dropped(self) -> int:
        """How many items were pushed out by newer ones."""
        with self._lock:
            return self._appended - len(self._items)

    def append(self, item: T) -> int:
        """Add ``item``; returns its sequence number."""
        with self._lock:
            self._items.append(item)
            self._appended += 1
            return self._appended - 1

    def extend(self, items: Iterable[T]) -> int:
        """Add every item in order; returns the sequence number the next item will get."""
        batch = list(items)
        with self._lock:
            self._items.extend(batch)
            self._appended += len(batch)
            return self._appended

    def snapshot(self) -> tuple[T, ...]:
        """Every item held, oldest first."""
        with self._lock:
            return tuple(self._items)

    def since(self, sequence: int) -> tuple[tuple[T, ...], int]:
        """Items with sequence numbers >= ``sequence`` still held, and the next sequence number.

        A reader that fell behind by more than the capacity gets what is left (the gap is
        visible as ``next - sequence > len(items)``).
        """
        with self._lock:
            first = self._appended - len(self._items)
            start = max(sequence, first) - first
            if start >= len(self._items):
                return (), self._appended
            return tuple(itertools.islice(self._items, start, None)), self._appended

    def clear(self) -> None:
        """Drop every item (the sequence numbers go on counting)."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        """How many items are held now."""
        with self._lock:
            return len(self._items)
