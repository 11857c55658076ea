"""The escalation model, its state machine and validation.

No aiohttp, no SQL, no click: this layer is pure and is imported by every
other one.
"""
