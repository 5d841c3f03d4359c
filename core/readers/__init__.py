"""The readers: the target, its configuration, its process, its logs, the loader, the probes, the samples."""
