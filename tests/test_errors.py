"""One root for what Kizuna raises on purpose (memory/errors.py): every public error class of
the project derives from KizunaError, so a caller can tell a refusal from a bug (a module's
private ones never leave it)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import adapters
import bot
import memory
from memory.errors import KizunaError


def test_every_error_class_derives_from_kizuna_error() -> None:
    strays = []
    for package in (adapters, bot, memory):
        for found in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(found.name)
            for name, cls in inspect.getmembers(module, inspect.isclass):
                mine = cls.__module__ == module.__name__ and not name.startswith("_")
                if mine and issubclass(cls, Exception) and not issubclass(cls, KizunaError):
                    strays.append(f"{module.__name__}.{name}")
    assert strays == []
