"""Watching a running server for the silent CPU fallback: the Nagios check and the textfile."""
