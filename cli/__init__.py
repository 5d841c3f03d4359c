"""The terminal front end over the core."""
