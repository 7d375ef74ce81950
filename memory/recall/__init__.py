"""Recall: what a cue brings to mind, by words and by meaning, and the indexes and copies derived
from the store for it."""
