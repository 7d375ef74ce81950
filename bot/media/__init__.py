"""Pictures, voice notes, documents users send, and replies said aloud."""
