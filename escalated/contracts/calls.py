"""Value objects of the contract generator: what discovery finds.

Everything here is plain data (frozen attrs) so the scanner, the rule table,
the report formats and the init/apply engine share one vocabulary without
importing each other. No libcst, no click, no aiohttp in this module.
"""

from __future__ import annotations

import attrs

PROVIDERS = ("openai", "anthropic", "litellm", "google-genai", "langchain")
CONFIDENCES = ("high", "medium", "low")
EXISTING_GATES = ("needs_approval", "requires_approval", "tool-approval", "langgraph.interrupt", "human_input_mode")


@attrs.frozen(order=True)
class Location:
    """Span of the whole call expression.

    ``path`` is POSIX and relative to the scanned root so output is the same
    on every machine; lines are 1-based, columns 0-based (libcst's convention).
    """

    path: str
    line: int
    column: int
    end_line: int
    end_column: int


@attrs.frozen(order=True)
class Finding:
    """One piece of evidence about what the call's output controls.

    ``rule`` is the rule id it supports (``R1`` … ``R11``), ``kind`` a short
    machine word (``code-execution``, ``money``, …), ``detail`` the thing seen
    in the code (a tool name, a sink call), ``line`` where it was seen.
    """

    rule: str
    kind: str
    detail: str
    line: int
    # "code" when what the code does showed it (a subprocess call, SQL text, a payment
    # SDK); "name" when only words in a name did: a low-confidence signal (rules.py).
    basis: str = "code"


@attrs.frozen(order=True)
class ToolSite:
    """A risky tool an agent runner runs inside the call, and where its function is.

    A guard around ``Runner.run`` decides after the tool already ran, so
    ``apply`` guards these at the tool (``@guard_tool``). ``function`` is the
    qualified function in ``path``, None when the tool is not a project
    function (a class, a built-in tool); ``guard_id`` is the contract of the
    ``@guard_tool`` it already carries; ``approval`` is true when the framework
    asks a human first (``needs_approval``).
    """

    name: str
    path: str
    function: str | None
    line: int
    guard_id: str | None = None
    approval: bool = False


@attrs.frozen
class Recommendation:
    """The mode chosen by the rule table: the highest mode among matched rules."""

    mode: str
    rules: tuple[str, ...]
    reasons: tuple[str, ...]
    confidence: str


@attrs.frozen
class LlmCall:
    location: Location
    provider: str
    api: str
    # Qualified enclosing function ("BillingAgent.decide_refund"), "<module>"
    # at top level. With ``index`` it names the call in contracts, so a call
    # keeps its identity when lines above it move.
    function: str
    index: int
    is_async: bool
    confidence: str
    guarded: bool
    guard_id: str | None
    existing_gate: str | None
    findings: tuple[Finding, ...]
    recommendation: Recommendation
    source: str
    # In a test folder or test file: reported apart, and never fails the scan by default.
    in_tests: bool = False
    # An agent runner (Runner.run*, a LangGraph prebuilt agent, a crew): its tools run inside
    # the call, and these are the risky ones (rules that set required or reviewed).
    runner: bool = False
    risky_tools: tuple[ToolSite, ...] = ()
    # The framework calls sync tools inside its running event loop (OpenAI Agents SDK): a
    # guard at such a tool must be awaitable, or it could not wait for the reviewer.
    tools_in_loop: bool = False
    # The runner's kind ("pydantic-agent", "crew", ...; "" for Runner.run and non-runners): apply
    # picks the framework's own approval hook by it.
    runner_kind: str = ""

    @property
    def unguarded_tools(self) -> tuple[ToolSite, ...]:
        """Risky tools the run reaches that neither a guard_tool nor the framework's approval gates."""
        return tuple(t for t in self.risky_tools if t.guard_id is None and not t.approval)

    @property
    def unseen_tools(self) -> tuple[str, ...]:
        """What the run's tools are that the scan could not see (MCP servers, tools built at run time, an agent it
        could not follow): a guard at the tool cannot be checked there, so such a run is never counted covered."""
        if not self.runner:
            return ()
        return tuple(dict.fromkeys(f.detail for f in self.findings if f.kind == "unresolved-tools"))

    @property
    def key(self) -> tuple[str, str, int]:
        """The identity a contract matches on."""
        return (self.location.path, self.function, self.index)


@attrs.frozen(order=True)
class ParseProblem:
    """A file that could not be read or parsed: reported, never skipped silently."""

    path: str
    message: str


@attrs.frozen
class ScanResult:
    calls: tuple[LlmCall, ...]
    errors: tuple[ParseProblem, ...]
    files_scanned: int
    lines_scanned: int
    # Notebooks (.ipynb) are not analysed; they are counted so the report can
    # say so instead of pretending the tree held no calls there.
    notebooks_skipped: tuple[str, ...] = ()
    # Generated or oversized files: not analysed, and said so (path, why).
    skipped: tuple[ParseProblem, ...] = ()
    # What the scan learnt about the project (clients, tools, wrappers of other modules),
    # so a rewritten file can be re-scanned as the whole-project scan saw it. Opaque here.
    context: object = attrs.field(default=None, eq=False, repr=False)
