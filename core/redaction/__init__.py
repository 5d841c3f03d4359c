"""Redaction: secrets masked, identities pseudonymised, in every member of a bundle."""
