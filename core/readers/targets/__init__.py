"""Target application profiles: where a target's configuration, log, libraries and process are."""
