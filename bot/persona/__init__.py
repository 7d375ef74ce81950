"""Persona files, their reference, and community character cards."""
