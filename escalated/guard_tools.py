"""Deprecated alias of :mod:`escalated.guard.tools` (``from escalated.guard import guard_tool``),
kept for code written before the package move and by earlier ``contracts apply`` runs."""
import sys

from escalated.guard import tools as _moved

sys.modules[__name__] = _moved
