"""The personas Kizuna ships: data only, one <name>.toml each (and assets/<name>/ for sprites).

This file exists so the folder installs as package data and is found with importlib.resources
wherever Kizuna is installed.
"""
