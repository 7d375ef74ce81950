"""Fakes of the services the bot talks to, served on 127.0.0.1 for tests."""
