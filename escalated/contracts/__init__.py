"""The contract generator: find LLM calls, recommend a mode, guard them.

- ``scan/``: which files are read, what each call is, what its output controls (facts);
- ``rules.py``: the one table that maps those facts to rules and modes;
- ``report/``: coverage by contracts and the text, JSON and SARIF reports;
- ``edit/``: ``init`` (draft contracts) and ``apply`` (wrap calls with their guard).

The guard's runtime half (reading contracts, rendering output for reviewers)
lives beside ``escalated.guard`` because it runs inside agents.
"""
