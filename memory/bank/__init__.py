"""The memory bank (bank.py), a façade over recall (memory/recall/), the store and the daily
upkeep (upkeep.py): what the bot remembers, recalls, reinforces and forgets, scope by scope."""

from memory.bank.bank import INDEX_FOLDER, MAX_SCOPE, BankError, Capacity, MemoryBank

__all__ = ["INDEX_FOLDER", "MAX_SCOPE", "BankError", "Capacity", "MemoryBank"]
