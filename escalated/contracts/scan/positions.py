"""Line and column spans on demand: only the top-level statements holding a reported node.

libcst computes positions by generating the code of the whole module and
recording a span for every node, the single largest cost of a scan of a real
tree when done for every candidate module. A report needs spans of a few
nodes: the calls and the facts their reasons cite. So the code of a top-level
statement is generated (with positions) only when a node inside it is asked
for, starting at that statement's first line, which Python's own parser (C,
fast) gives without generating anything. Each statement is generated once per
module, whatever the number of rounds that ask.
"""

from __future__ import annotations

import ast
import warnings
from typing import cast

import libcst as cst
from libcst._position import CodeRange
from libcst.metadata import PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from escalated.contracts.scan.index import ModuleIndex


class Positions:
    def __init__(self, module: cst.Module, index: ModuleIndex, *, source: str | None) -> None:
        self._module, self._index, self._source = module, index, source
        self._provider = PositionProvider()
        self._top = {id(stmt): i for i, stmt in enumerate(module.body)}
        self._starts: list[int] | None = None
        self._done: set[int] = set()
        self._whole = False

    def span(self, node: cst.CSTNode) -> CodeRange | None:
        found = self._computed(node)
        if found is not None or self._whole:
            return found
        top = self._statement(node)
        if top is None or top in self._done:
            return None
        self._done.add(top)
        starts = self._statement_starts()
        if starts is None:
            self._generate_all()
        else:
            self._generate(self._module.body[top], line=starts[top])
        return self._computed(node)

    def _computed(self, node: cst.CSTNode) -> CodeRange | None:
        # What PositionProvider stores are CodeRanges (typed as any metadata value).
        return cast("CodeRange | None", self._provider._computed.get(node))

    def line(self, node: cst.CSTNode) -> int:
        found = self.span(node)
        return found.start.line if found is not None else 0

    def _statement(self, node: cst.CSTNode) -> int | None:
        """The index of the top-level statement holding ``node``, through the index's parent links."""
        current: cst.CSTNode | None = node
        parents = self._index.parents
        while current is not None:
            top = self._top.get(id(current))
            if top is not None:
                return top
            current = parents.get(id(current))
        return None

    def _generate(self, statement: cst.CSTNode, *, line: int) -> None:
        state = PositionProvidingCodegenState(
            default_indent=self._module.default_indent, default_newline=self._module.default_newline, provider=self._provider
        )
        state.line = line
        statement._codegen(state)

    def _generate_all(self) -> None:
        """Python's parser disagrees with libcst about this module: the whole module, once."""
        self._whole = True
        self._provider._gen_impl(self._module)

    def _statement_starts(self) -> list[int] | None:
        """The line each top-level statement's code (its leading blank and comment lines included) starts at."""
        if self._starts is not None:
            return self._starts
        body = _python_body(self._source)
        if body is None:
            return None
        starts: list[int] = []
        i = 0
        for statement in self._module.body:
            if i >= len(body):
                return None
            first = body[i]
            i += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
            line = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
            leading = len(statement.leading_lines)
            decorators = getattr(statement, "decorators", ())
            if decorators:
                leading += len(decorators[0].leading_lines)
            starts.append(line - leading)
        if i != len(body):
            return None
        self._starts = starts
        return starts


def _python_body(source: str | None) -> list[ast.stmt] | None:
    if source is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes warn; only the statements' lines matter
        try:
            return ast.parse(source).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
