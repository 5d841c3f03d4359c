"""The PySide6 wizard: thin, renders the core's report."""
