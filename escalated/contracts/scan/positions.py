"""Line and column spans on demand: only the top-level statements holding a reported node.

libcst computes positions by generating the code of the whole module and
recording a span for every node, the single largest cost of a scan of a real
tree when done for every candidate module. A report needs spans of a few
nodes: the calls and the facts their reasons cite. So the code of a statement
is generated (with positions) only when a node inside it is asked for,
starting at that statement's first line, which Python's own parser (C, fast)
gives without generating anything. The statement is the smallest one known
that way: one of a function's or class's body (at any depth of them), else the
top-level one (a test class is a single top-level statement, and generating
all of it for one call was a fifth of a real tree's scan). Each statement is
generated once per module, whatever the number of rounds that ask.
"""

from __future__ import annotations

import ast
import warnings
from array import array
from collections.abc import Sequence
from typing import cast

import libcst as cst
from libcst._position import CodeRange
from libcst.metadata import PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from escalated.contracts.scan.index import ModuleIndex


class Positions:
    def __init__(self, module: cst.Module, index: ModuleIndex, *, source: str | None) -> None:
        # The index's parents and outline, not the index: it keeps this object (``index.positions``),
        # and a cycle would leave the module's tree to the garbage collector instead of freeing it.
        self._module, self._parents, self._outline, self._source = module, index.parents, index.outline, source
        self._provider = PositionProvider()
        self._top = {id(stmt): i for i, stmt in enumerate(module.body)}
        self._starts: list[int] | None = None
        self._block_starts: dict[int, list[int] | None] = {}
        self._done: set[int] = set()
        self._whole = False

    def span(self, node: cst.CSTNode) -> CodeRange | None:
        found = self._computed(node)
        if found is not None or self._whole:
            return found
        chain = self._chain(node)
        if chain is None:
            return None
        starts = self._statement_starts()
        if starts is None:
            self._generate_all()
            return self._computed(node)
        statement, line, indents = self._unit(chain, starts[self._top[id(chain[0])]])
        if id(statement) in self._done:
            return None
        self._done.add(id(statement))
        self._generate(statement, line=line, indents=indents)
        return self._computed(node)

    def _unit(self, chain: list[cst.CSTNode], line: int) -> tuple[cst.CSTNode, int, list[str]]:
        """The smallest statement holding the node whose first line is known: a statement of a
        function's or class's body (at any depth of them) rather than the whole top-level one
        (a test class is one top-level statement)."""
        statement = chain[0]
        indents: list[str] = []
        depth = 0
        while isinstance(statement, cst.FunctionDef | cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            block = statement.body
            if len(chain) < depth + 3 or chain[depth + 1] is not block:
                break  # the node is in the header (or is the block)
            starts = self._block_starts.get(id(block))
            if starts is None:
                break
            inner = chain[depth + 2]
            indents.append(self._module.default_indent if block.indent is None else block.indent)
            statement, line = inner, starts[block.body.index(inner)]
            depth += 2
        return statement, line, indents

    def _chain(self, node: cst.CSTNode) -> list[cst.CSTNode] | None:
        """The node's ancestors from its top-level statement down to itself."""
        chain: list[cst.CSTNode] = []
        current: cst.CSTNode | None = node
        parents = self._parents
        while current is not None:
            chain.append(current)
            if id(current) in self._top:
                return chain[::-1]
            current = parents.get(id(current))
        return None

    def _computed(self, node: cst.CSTNode) -> CodeRange | None:
        # What PositionProvider stores are CodeRanges (typed as any metadata value).
        return cast("CodeRange | None", self._provider._computed.get(node))

    def line(self, node: cst.CSTNode) -> int:
        found = self.span(node)
        return found.start.line if found is not None else 0

    def _generate(self, statement: cst.CSTNode, *, line: int, indents: list[str]) -> None:
        state = PositionProvidingCodegenState(
            default_indent=self._module.default_indent, default_newline=self._module.default_newline, provider=self._provider
        )
        state.line = line
        state.indent_tokens = indents  # the blocks it is in, as their own code generation would have pushed them
        statement._codegen(state)

    def _generate_all(self) -> None:
        """Python's parser disagrees with libcst about this module: the whole module, once."""
        self._whole = True
        self._provider._gen_impl(self._module)

    def _statement_starts(self) -> list[int] | None:
        """The line each top-level statement's code (its leading blank and comment lines included) starts at.

        Those of the statements in functions' and classes' bodies are kept by block. They come
        from the outline of Python's tree the scan kept of the module (``outline``), else from
        parsing ``source`` here (a file scanned on its own).
        """
        if self._starts is None:
            lines = self._outline if self._outline is not None else _outline_of(self._source)
            if lines is not None:
                self._starts = _starts(self._module.body, lines, 0, _top_count(lines), self._block_starts)
        return self._starts


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# An outline is three numbers a statement, in source order: the line its code starts at
# (decorators included), how many statements its body holds when it is a function or a
# class (-1 otherwise, its body not outlined), and how many statements its record covers
# (itself and its outlined body), so a reader can step over it.
_LINE, _BODY, _SPAN = 0, 1, 2


def outline(tree: ast.Module) -> array[int]:
    """What ``Positions`` needs of Python's tree for a module, kept as numbers: the tree itself
    is dropped (the scan reads each file's imports off it and would otherwise parse it again
    for the lines of the first module's span it is asked for)."""
    out: array[int] = array("i")
    stack: list[tuple[list[ast.stmt], int, int]] = [(tree.body, 0, -1)]  # (body, next statement, its owner's record)
    while stack:
        body, i, owner = stack.pop()
        if i == len(body):
            if owner >= 0:
                out[3 * owner + _SPAN] = len(out) // 3 - owner
            continue
        stack.append((body, i + 1, owner))
        statement = body[i]
        at = len(out) // 3
        out.extend((min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))]), -1, 1))
        if isinstance(statement, _DEFINITIONS):
            out[3 * at + _BODY] = len(statement.body)
            stack.append((statement.body, 0, at))
    return out


def _starts(
    statements: Sequence[cst.BaseStatement], lines: array[int], first: int, count: int, blocks: dict[int, list[int] | None]
) -> list[int] | None:
    """For each statement, the line its code starts at; None if the two parsers disagree.

    ``count`` statements of the outline ``lines`` from record ``first`` are Python's for them.
    A function's or class's body goes into ``blocks`` (by its block's id) the same way.
    """
    starts: list[int] = []
    i, record = 0, first
    for statement in statements:
        if i >= count:
            return None
        at = record
        step = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        for _ in range(step):
            if i < count:
                record += lines[3 * record + _SPAN]
            i += 1
        leading = len(getattr(statement, "leading_lines", ()))  # every statement has them; BaseStatement does not say
        decorators = getattr(statement, "decorators", ())
        if decorators:
            leading += len(decorators[0].leading_lines)
        starts.append(lines[3 * at + _LINE] - leading)
        if isinstance(statement, cst.FunctionDef | cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            inner = lines[3 * at + _BODY]
            if inner >= 0:
                blocks[id(statement.body)] = _starts(statement.body.body, lines, at + 1, inner, blocks)
    return starts if i == count else None


def _top_count(lines: array[int]) -> int:
    """How many statements the outline's module body holds."""
    count = record = 0
    while 3 * record < len(lines):
        record += lines[3 * record + _SPAN]
        count += 1
    return count


def _outline_of(source: str | None) -> array[int] | None:
    if source is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes warn; only the statements' lines matter
        try:
            return outline(ast.parse(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
