"""The crowd platforms (Prolific, MTurk): one room, one folder per platform (docs/architecture.md)."""
