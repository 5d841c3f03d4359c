"""Test inference: the CPU baseline and the GPU retry in an isolated probe."""
