"""Kizuna's tests; tests/fakes/ holds the loopback fakes and shared helpers."""
