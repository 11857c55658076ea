"""Adapters: escalated where an agent already runs (CONTRACT §13, §14)."""
