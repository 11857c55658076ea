"""What the resolver says an expression is (``Kind``) and which model API a call is (``Match``)."""

from __future__ import annotations

import attrs
import libcst as cst


@attrs.frozen
class Kind:
    provider: str
    kind: str  # client | module | chat | runnable | agent | model | genai-chat | router | ...: see apis.apis_for
    confidence: str = "high"
    # The expression that built it, so the surface analysis can read tools= etc.
    origin: cst.CSTNode | None = attrs.field(default=None, eq=False)
    base: Kind | None = attrs.field(default=None, eq=False)
    # A crew built in another project module: the key its tools' findings are exported under.
    tools_key: str | None = attrs.field(default=None, eq=False)
    # A resource of an SDK client kept under a name (``self.client = OpenAI().chat.completions``): the
    # attribute path from the client, which a call on the name continues (``self.client.create``).
    resource: str = attrs.field(default="", eq=False)


def runs_callback_kind(position: int, param: str) -> Kind:
    """What a project function that returns a call of its parameter (``return await f(model)``) is
    exported as, for the modules that call it: which argument it runs."""
    return Kind("project", f"runs:{position}:{param}")


def runs_callback(kind: Kind | None) -> tuple[int, str] | None:
    """The (position, parameter name) ``runs_callback_kind`` wrote, or None for any other kind."""
    if kind is None or not kind.kind.startswith("runs:"):
        return None
    at, _, param = kind.kind.removeprefix("runs:").partition(":")
    return int(at), param


@attrs.frozen
class Match:
    provider: str
    api: str
    confidence: str
    receiver: Kind | None
    # A call of a registry of the module's wrappers (``llm = self.providers[name]; llm(history)``) is a call
    # site of each wrapper it holds: ``api`` is the first, ``also`` the others.
    also: tuple[str, ...] = ()


# What crossref exports for a class defined at the top of a project module.
PROJECT_CLASS = Kind("project", "class")
# ... and for one that only declares methods (a typing.Protocol, an abc.ABC): any class may stand behind it.
PROJECT_INTERFACE = Kind("project", "interface")
# ... and, under "Class.__getattr__", for one whose instances look their attributes up by name at run time.
BY_NAME = Kind("project", "by-name")
# ... and, under "Class.@registered", for one a project decorator registers (``@register_agent(...)``): the
# kind's text names the decorator (``registered:pkg.decorators.register_agent``).
REGISTERED = "@registered"


def registered_kind(decorator: str) -> Kind:
    return Kind("project", f"registered:{decorator}")

_CONFIDENCES = ("low", "medium", "high")


def weaker(a: str, b: str) -> str:
    """The lower of two confidences."""
    return _CONFIDENCES[min(_CONFIDENCES.index(a), _CONFIDENCES.index(b))]
