"""The commands users give, platform-free, and what they answer."""
