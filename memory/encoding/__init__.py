"""Encoding: a closed conversation becomes memories, a diary page, profiles and intentions."""
