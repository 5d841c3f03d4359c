"""How the dynamic loader would resolve a library: ELF and PE readers, search paths."""
