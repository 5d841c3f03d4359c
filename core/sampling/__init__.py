"""GPU and CPU sampling during a probe: sources (NVML, replay) behind one interface, a ring buffer."""
