"""The contract generator: find LLM calls, recommend a mode, guard them.

Submodules are imported on demand; this package imports nothing heavy.
"""
