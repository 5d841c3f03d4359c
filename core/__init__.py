"""The headless engine: collect facts, check them, rank findings. Never imports Qt."""
