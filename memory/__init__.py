"""Memory: the SQLite store (source of truth), FAISS indexes (derived), embeddings, recall and
forgetting. Knows nothing of platforms or personas' prose.

    from memory import MemoryBank
    bank = await MemoryBank.open(data_dir, embedder="local")
"""

from memory.bank import MemoryBank
from memory.recall.ranking import Recalled

__all__ = ["MemoryBank", "Recalled"]
