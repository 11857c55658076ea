"""What another module does with a wrapper's output, given back to the call inside.

``LitellmModel._query`` calls ``litellm.completion`` and ``query`` returns its
answer; ``DefaultAgent.query``, in another module, calls ``self.model.query``
and its ``step`` runs the answer's actions as shell commands. The call inside
the wrapper is where a guard can sit, so the evidence of its wrapper's call
sites in other modules is its evidence too (a wrapper of a wrapper's, in
turn): ``required`` there, ``required`` here. A call site names its wrapper
as ``Owner.method`` (or ``function``); a site on a protocol or abstract
class (``Model.query``, ``model: Model``) stands for every project wrapper
method of that name, since any of them may be the one given.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from escalated.contracts import rules
from escalated.contracts.calls import Finding, LlmCall
from escalated.contracts.scan.crossref import module_name
from escalated.contracts.scan.module import analysis_confidence

_GIVEN = "returned to "
# Rounds of giving back, one module of a wrapper chain each, until nothing changes: at least as deep as
# discovery finds wrappers of wrappers across modules (eight rounds, each wrapper's call inside one more).
# Four stopped short: UFO's providers sit six wrappers below the agents that act on their answer.
_ROUNDS = 12


def with_callers_evidence(
    by_file: Mapping[str, tuple[LlmCall, ...]],
    returned_by: Mapping[str, tuple[frozenset[str], ...]],
    *,
    bases: Mapping[str, set[str]] | None = None,
    imports: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, tuple[LlmCall, ...]]:
    """``by_file`` with each wrapper's inner calls given the findings of its call sites in other modules.

    A method overriding one of a base class in another module (``LitellmTextbasedModel._query``) is
    called where the base calls its own (``self._query(...)`` in ``LitellmModel.query``): those sites
    are its call sites too, private methods included (``bases``: class -> the classes it derives from).

    A wrapper function that several modules define (each example app's own ``utils.call_llm``) gets
    the sites whose module imports it (``imports``: module -> local name -> dotted target), when a
    site's imports name one of them; a site naming none of them is every one's, as it would be alone."""
    bases = bases or {}
    out = dict(by_file)
    owners = {q.split(".")[0] for exits in returned_by.values() for found in exits for q in found if "." in q}
    # A module's own wrapper functions: its call of that name is its own function's, not another module's.
    own = {rel: {q for found in exits for q in found if "." not in q} for rel, exits in returned_by.items()}
    defining: dict[str, list[str]] = {}
    for rel, names in sorted(own.items()):
        for name in names:
            defining.setdefault(name, []).append(rel)
    picked = _Picked(imports or {}, {name: rels for name, rels in defining.items() if len(rels) > 1})
    for _ in range(_ROUNDS):
        sites = _sites(out, owners, bases)
        changed = False
        for rel, calls in out.items():
            exits = returned_by.get(rel, ())
            if len(exits) != len(calls):
                continue
            updated = tuple(_given_back(call, found, sites, rel, bases, own, picked) for call, found in zip(calls, exits, strict=True))
            if updated != calls:
                out[rel], changed = updated, True
        if not changed:
            break
    return out


def _sites(
    by_file: Mapping[str, tuple[LlmCall, ...]], owners: set[str], bases: Mapping[str, set[str]]
) -> dict[str, list[LlmCall]]:
    """Wrapper call sites by the name they call: ``LitellmModel.query``, ``ask``, ``*.query`` (a protocol's).
    A project base class's (``LMM.__call__`` on ``coder: LMM``, an ABC whose subclasses ask the model) is
    both its own name, which the subclasses' methods find as their base's, and ``*.__call__``."""
    out: dict[str, list[LlmCall]] = {}
    for calls in by_file.values():
        for call in calls:
            if call.confidence != "medium" or call.api.count(".") > 1:
                continue
            owner, _, method = call.api.rpartition(".")
            key = call.api if not owner or owner in owners else f"*.{method}"
            out.setdefault(key, []).append(call)
            if key != call.api and owner in bases:
                out.setdefault(call.api, []).append(call)
    return out


@attrs.frozen
class _Picked:
    """Which of several modules' wrapper functions of one name a call site's module imports."""

    imports: Mapping[str, Mapping[str, str]]
    ambiguous: Mapping[str, list[str]]  # function name -> the modules defining one, when more than one does

    def calls(self, site: str, name: str, rel: str) -> bool:
        """Whether a call of ``name`` in ``site`` may be ``rel``'s function of that name."""
        candidates = self.ambiguous.get(name)
        targets = self.imports.get(site)
        if candidates is None or targets is None:
            return True
        named = [other for other in candidates if _imports_from(targets, name, other)]
        return not named or rel in named


def _imports_from(targets: Mapping[str, str], name: str, rel: str) -> bool:
    """Whether an import target names ``rel``'s ``name``: ``from app.utils.call_llm import call_llm``, or
    through a package above it (``from utils import call_llm`` of ``utils/__init__.py``), by any suffix of
    the module path as the project's tables read it."""
    parts = module_name(rel).split(".")
    holders = {".".join(parts[start:end]) for end in range(1, len(parts) + 1) for start in range(end)}
    return any(target.rpartition(".")[2] == name and target.rpartition(".")[0] in holders for target in targets.values())


def ancestors(name: str, bases: Mapping[str, set[str]]) -> list[str]:
    """The classes ``name`` derives from, nearest first (names as written; eight at most)."""
    found: list[str] = []
    todo = sorted(bases.get(name, ()))
    while todo and len(found) < 8:
        base = todo.pop(0)
        if base not in found and base != name:
            found.append(base)
            todo += sorted(bases.get(base, ()))
    return found


def _given_back(
    call: LlmCall,
    exits: frozenset[str],
    sites: Mapping[str, list[LlmCall]],
    rel: str,
    bases: Mapping[str, set[str]],
    own: Mapping[str, set[str]],
    picked: _Picked,
) -> LlmCall:
    added: list[Finding] = []
    for qualname in sorted(exits):
        parts = qualname.split(".")
        if len(parts) > 2:
            continue
        # A base class's own call of the method (self._query(...)) calls the override too.
        inherited = [f"{base}.{parts[-1]}" for base in ancestors(parts[0], bases)] if len(parts) == 2 else []
        if len(parts) == 2 and parts[-1].startswith("_"):
            # A private method: where a base class calls its own, or a subclass calls it (self._aask(…)).
            keys = [qualname, *inherited]
        else:
            keys = [qualname, *inherited, f"*.{parts[-1]}"] if len(parts) == 2 else [qualname]
        for site in (s for key in keys for s in sites.get(key, ())):
            if site.location.path == rel:
                continue  # the same module's callers are followed by the flow itself
            if len(parts) == 1 and qualname in own.get(site.location.path, ()):
                continue  # generate_response(...) where that module defines its own generate_response
            if len(parts) == 1 and not picked.calls(site.location.path, qualname, rel):
                continue  # another app's call_llm(...): its module imports that app's own call_llm
            where = f"{site.location.path}:{site.location.line}"
            for f in site.findings:
                if rules.effective_mode(f) == "autonomous":
                    continue  # free text there says nothing here
                given = f.detail if f.detail.startswith(_GIVEN) else f"{_GIVEN}{site.api} ({where}) -> {f.detail}"
                added.append(attrs.evolve(f, detail=given, line=0))
    findings = tuple(sorted(set(call.findings) | set(added), key=lambda f: (f.rule, f.line, f.detail)))
    if set(findings) == set(call.findings):
        return call
    confidence = analysis_confidence(findings, escapes=False, call_confidence=call.confidence)
    return attrs.evolve(call, findings=findings, recommendation=rules.recommend(findings, confidence=confidence, path=rel))
