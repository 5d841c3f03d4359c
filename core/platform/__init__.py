"""The platform: guarded file reads, the bundled resources, the frozen build."""
