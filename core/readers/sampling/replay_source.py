"""A real recorded series replayed through the sample-source interface (core/readers/sampling/sources.py).

Its status always says the series was recorded elsewhere, unless the recording says it was
recorded here.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from fallback_doctor.core.readers.sampling.recordings import Recording, group_ticks
from fallback_doctor.core.readers.sampling.recordings import provenance_words as recordings_provenance_words
from fallback_doctor.core.readers.sampling.sample import (
    SOURCE_FINISHED,
    SOURCE_NOT_STARTED,
    SOURCE_OK,
    GpuSample,
    SourceStatus,
)


class ReplaySource:
    """A real recorded series replayed through the ``SampleSource`` interface."""

    def __init__(
        self,
        series: Recording | Sequence[GpuSample],
        *,
        speed: float | None = 1.0,
        restamp: bool = True,
        loop: bool = False,
        provenance: str | None = None,
        recorded_here: bool | None = None,
        provenance_words: dict[str, Any] | None = None,
    ) -> None:
        """``series``: a parsed recording (its source goes into the status) or samples.

        ``speed``: 1.0 the recorded pace, 10.0 ten times faster, None one tick per read.
        ``provenance``: where the samples come from, for the status (a Recording brings its own);
        ``provenance_words``: the same as catalogue words (none given with a ``provenance`` of the
        caller's own: it is shown as written).
        """
        if speed is not None and speed <= 0:
            raise ValueError(f"speed must be positive, not {speed}")
        if isinstance(series, Recording):
            samples: Sequence[GpuSample] = series.samples
            here = series.recorded_here if recorded_here is None else recorded_here
            if provenance is None:
                provenance, provenance_words = series.provenance(), series.provenance_words()
        else:
            samples = series
            here = bool(recorded_here)
            if provenance is None:
                provenance = (
                    "recorded on this machine"
                    if here
                    else "recorded elsewhere and replayed, not measured here"
                )
                provenance_words = recordings_provenance_words(here)
        self._ticks = group_ticks(sorted(samples, key=lambda sample: sample.timestamp))
        self._speed = speed
        self._restamp = restamp
        self._loop = loop
        self._provenance = provenance
        self.provenance_words = provenance_words
        self._recorded_here = here
        self._start: float | None = None
        self._position = 0
        self._offsets = tuple(tick[0].timestamp - self._ticks[0][0].timestamp for tick in self._ticks)
        gaps = [b - a for a, b in zip(self._offsets, self._offsets[1:], strict=False) if b > a]
        self._hold = statistics.median(gaps) if gaps else 1.0
        self._status = SourceStatus(
            "replay", SOURCE_NOT_STARTED, "replay", provenance, reason_words=provenance_words
        )

    @property
    def name(self) -> str:
        """Always "replay"."""
        return "replay"

    @property
    def tick_count(self) -> int:
        """How many recorded ticks there are."""
        return len(self._ticks)

    @property
    def recorded_here(self) -> bool:
        """Whether the replayed samples were measured on this machine (a bundle made here)."""
        return self._recorded_here

    @property
    def provenance(self) -> str:
        """Where the replayed samples come from, in words."""
        return self._provenance

    def open(self) -> SourceStatus:
        """Ready to replay (an empty series is "finished" at once)."""
        self._start, self._position = None, 0
        if not self._ticks:
            self._status = SourceStatus(
                "replay",
                SOURCE_FINISHED,
                "replay_empty",
                "the recording holds no samples",
                reason_words={"id": "evidence.replay.empty", "params": {}},
            )
        else:
            self._status = SourceStatus(
                "replay", SOURCE_OK, "replay", self._provenance, reason_words=self.provenance_words
            )
        return self._status

    def read(self, now: float, pid: int | None) -> tuple[GpuSample, ...]:
        """The tick due at ``now`` (sample-and-hold), or the next tick when ``speed`` is None."""
        if self._status.state != SOURCE_OK:
            return ()
        if self._speed is None:
            if self._position >= len(self._ticks):
                if not self._loop:
                    return self._finish()
                self._position = 0
            tick = self._ticks[self._position]
            self._position += 1
        else:
            if self._start is None:
                self._start = now
            elapsed = (now - self._start) * self._speed
            end = self._offsets[-1] + self._hold
            if elapsed >= end:
                if not self._loop:
                    return self._finish()
                elapsed %= end
            while self._position + 1 < len(self._ticks) and self._offsets[self._position + 1] <= elapsed:
                self._position += 1
            if self._offsets[self._position] > elapsed:
                self._position = 0
                while self._position + 1 < len(self._ticks) and self._offsets[self._position + 1] <= elapsed:
                    self._position += 1
            tick = self._ticks[self._position]
        if self._restamp:
            return tuple(replace(sample, timestamp=now, pid=pid) for sample in tick)
        return tick

    def _finish(self) -> tuple[GpuSample, ...]:
        self._status = SourceStatus(
            "replay",
            SOURCE_FINISHED,
            "replay_finished",
            f"all {len(self._ticks)} recorded ticks were replayed ({self._provenance})",
            reason_words={
                "id": "evidence.replay.finished",
                "params": {
                    "count": len(self._ticks),
                    "provenance": self.provenance_words or self._provenance,
                },
            },
        )
        return ()

    def status(self) -> SourceStatus:
        """OK while replaying (the reason names the recording), then "finished"."""
        return self._status

    def close(self) -> None:
        """Nothing to release."""
        if self._status.state == SOURCE_OK:
            self._status = replace(self._status, state=SOURCE_FINISHED, code="replay_stopped")
