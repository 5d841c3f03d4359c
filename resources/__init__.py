"""Bundled knowledge: compatibility tables, log signatures, texts in English and Korean."""
