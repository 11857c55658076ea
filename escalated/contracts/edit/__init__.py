"""Editing a project: draft contracts (init) and wrap calls with their guard (apply)."""
