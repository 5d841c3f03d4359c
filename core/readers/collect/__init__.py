"""Collectors: one per layer, fault-isolated and time-bounded; native calls only in probes."""
