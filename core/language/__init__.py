"""The language: the text catalogues and their grammar (words are chosen where a document is shown)."""
