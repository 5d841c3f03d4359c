"""GPU and CPU sampling during a probe: sources (NVML, replay) behind one interface, a ring buffer.

Modules and their public API (each module's docstring has the details):

- ``sample``: ``GpuSample`` (one NA-aware reading: ``None`` where a source cannot tell, never
  0), ``SourceStatus`` (what a source can do, as a value, with ``sentence()``), ``SAMPLE_FIELDS``.
- ``ring``: ``RingBuffer[T]`` (bounded, thread-safe, sequence numbers, ``since(sequence)``).
- ``sources``: the ``SampleSource`` / ``CpuSource`` protocols; ``NvmlSource`` (nvidia-ml-py;
  without a driver its status says why), ``PsutilCpuSource`` (the probe's CPU %),
  ``ReplaySource`` (a real recorded series, at its pace, faster, or one tick per read).
- ``recordings``: pure parsers for recorded series (nvidia-smi ``--query-gpu`` CSV with or
  without header/units, ``dmon``, full ``nvidia-smi`` tables, GPUtil blocks, time + CSV rows),
  ``load_recording`` / ``parse_recording`` -> ``Recording`` (samples with their source).
- ``sampler``: ``Sampler`` (a thread at 10 Hz into the ring buffer; ``mark_phase``,
  ``set_pid``, ``start``/``stop``, ``snapshot``), ``SamplingSeries`` (``to_dict``/``from_dict``,
  ``to_csv``/``from_csv`` for samples.csv), ``PhaseMark``, the standard phase names.

By hand, the same readings: `nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,
memory.total,temperature.gpu,clocks.sm,power.draw --format=csv -lms 100`,
`nvidia-smi --query-compute-apps=pid,used_memory --format=csv` and `top -p PID`.
"""
