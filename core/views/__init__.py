"""The views: what each wizard page and terminal shows, computed from the document alone."""
