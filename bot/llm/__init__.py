"""Chat models: the `ChatModel` protocol, its providers, and the tiers that route to them."""
