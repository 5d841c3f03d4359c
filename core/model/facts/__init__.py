"""Typed, frozen facts about one layer each; None where a fact could not be collected."""
