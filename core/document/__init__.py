"""The document: the one report document, its schema, its text and its fix as a script."""
