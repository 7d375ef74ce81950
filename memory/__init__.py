"""Memory: the SQLite store (source of truth). Knows nothing of platforms or personas' prose."""
