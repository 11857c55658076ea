"""Scanning: which files, what each call is, what its output controls."""
