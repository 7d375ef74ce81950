"""Memory: the store (source of truth), FAISS indexes (derived), embeddings, recall and
forgetting. Knows nothing of platforms or personas' prose.

    from memory.bank import MemoryBank
    bank = await MemoryBank.open(data_dir, embedder="local")
"""
