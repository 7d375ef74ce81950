"""Conversations: sessions (short-term memory), state slots, and what happens after one closes."""
