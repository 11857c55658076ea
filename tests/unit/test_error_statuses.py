"""Every error class of the package has its HTTP status at the HTTP edge
(escalated/http/statuses.py), and none carries one of its own: a new error
cannot answer 500 by omission, and the core stays free of HTTP.

The client's ``ApiError`` is the exception: it reports the status a server
answered."""

from __future__ import annotations

import importlib
import pkgutil
import warnings

import escalated
from escalated.agent.client import ApiError
from escalated.errors import EscalatedError, NotFound, UnknownPolicy
from escalated.http.statuses import STATUS_OF_CODE, status_of

# Modules that need a framework this environment may lack (CrewAI has its own).
OPTIONAL = {"escalated.adapters.crewai"}


def _import_every_module() -> None:
    for info in pkgutil.walk_packages(escalated.__path__, "escalated."):
        if info.name.endswith(".__main__"):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the shims' deprecation notes
                importlib.import_module(info.name)
        except ImportError:
            if info.name not in OPTIONAL:
                raise


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


def _error_classes() -> list[type[EscalatedError]]:
    _import_every_module()
    every = {EscalatedError, *_subclasses(EscalatedError)}
    return sorted((c for c in every if not issubclass(c, ApiError) and c.__module__.startswith("escalated.")), key=str)


def test_every_error_class_has_a_status_at_the_http_edge_and_none_of_its_own():
    classes = _error_classes()
    assert len(classes) > 30 and NotFound in classes  # the walk found them
    unlisted = [f"{c.__module__}.{c.__qualname__} ({c.code})" for c in classes if c.code not in STATUS_OF_CODE]
    assert not unlisted, "add these codes to escalated/http/statuses.py: " + ", ".join(unlisted)
    carrying = [f"{c.__module__}.{c.__qualname__}" for c in classes if hasattr(c, "status")]
    assert not carrying, "an error says what went wrong; its status is the HTTP edge's: " + ", ".join(carrying)


def test_a_subclass_answers_its_own_codes_status_and_an_unknown_code_500():
    assert status_of(UnknownPolicy("no policy 'x'")) == 422
    assert status_of(NotFound()) == 404
    stray = EscalatedError("boom")
    stray.code = "no_such_code"
    assert status_of(stray) == 500
