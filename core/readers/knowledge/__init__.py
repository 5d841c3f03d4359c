"""Compatibility knowledge: bundled, sourced tables in resources/compat, loaded and queried."""
