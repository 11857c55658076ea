"""Deprecated alias of :mod:`escalated.agent.receiver`, kept for code written before the package move; import that instead."""
import sys

from escalated.agent import receiver as _moved

sys.modules[__name__] = _moved
