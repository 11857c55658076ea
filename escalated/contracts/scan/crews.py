"""CrewAI's project layout: ``@CrewBase`` classes whose ``@crew`` method builds the crew.

``LatestAiDevelopmentCrew().crew().kickoff(inputs=...)`` runs a ``Crew`` built
as ``Crew(agents=self.agents, tasks=self.tasks)``, where ``self.agents`` is
every ``@agent`` method's ``Agent(...)`` of the class (CrewAI collects them).
These helpers find those calls; ``resolve.py`` makes ``X().crew()`` a crew and
``offered.py`` reads the agents' tools.
"""

from __future__ import annotations

import libcst as cst

from escalated.contracts.scan.index import ModuleIndex, dotted_name


def is_crew_base(node: cst.ClassDef) -> bool:
    return any((dotted_name(_target(d.decorator)) or "").rpartition(".")[2] == "CrewBase" for d in node.decorators)


def crew_built(index: ModuleIndex, class_name: str, method: str) -> cst.Call | None:
    """The ``Crew(...)`` a ``@crew`` method of a ``@CrewBase`` class returns."""
    node = index.class_nodes.get(class_name)
    if node is None or not is_crew_base(node) or not _decorated(index, f"{class_name}.{method}", "crew"):
        return None
    return next(iter(_returned_calls(index, f"{class_name}.{method}")), None)


def crew_methods(index: ModuleIndex) -> list[tuple[str, str, cst.Call]]:
    """(class, method, Crew call) for every ``@crew`` method of the module's ``@CrewBase`` classes."""
    out = []
    for class_name, node in index.class_nodes.items():
        if "." in class_name or not is_crew_base(node):
            continue
        for qualname in index.decorators:
            owner, _, method = qualname.rpartition(".")
            built = crew_built(index, class_name, method) if owner == class_name else None
            if built is not None:
                out.append((class_name, method, built))
    return out


def agents_of(index: ModuleIndex, crew: cst.Call) -> list[cst.Call]:
    """``Crew(agents=self.agents)`` in a ``@CrewBase`` class: the ``Agent(...)`` of each ``@agent`` method."""
    owner = _enclosing_class(index, crew)
    if owner is None:
        return []
    return [
        call
        for qualname in index.decorators
        if qualname.rpartition(".")[0] == owner and _decorated(index, qualname, "agent")
        for call in _returned_calls(index, qualname)
    ]


def _enclosing_class(index: ModuleIndex, node: cst.CSTNode) -> str | None:
    current = index.parents.get(id(node))
    while current is not None:
        if isinstance(current, cst.ClassDef):
            return next((q for q, n in index.class_nodes.items() if n is current), None)
        current = index.parents.get(id(current))
    return None


def _decorated(index: ModuleIndex, qualname: str, name: str) -> bool:
    return any((dotted_name(_target(d.decorator)) or "").rpartition(".")[2] == name for d in index.decorators.get(qualname, ()))


def _returned_calls(index: ModuleIndex, qualname: str) -> list[cst.Call]:
    scope = index.scopes.get(qualname)
    if scope is None:
        return []
    return [n.value for n in index.subtree(scope.node) if isinstance(n, cst.Return) and isinstance(n.value, cst.Call)]


def _target(decorator: cst.BaseExpression) -> cst.BaseExpression:
    return decorator.func if isinstance(decorator, cst.Call) else decorator
