"""The diagnostic bundle: export with redaction, and safe opening of bundles made elsewhere."""
