"""Crash-prone native work, run in a child process with a timeout."""
