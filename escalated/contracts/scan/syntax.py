"""Small syntax questions the decision-surface analysis asks of libcst nodes."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence

import attrs
import libcst as cst


MCP_WHY = "MCP servers: tools are listed by the server at run time"


@attrs.frozen
class McpServers:
    """Tools the scan cannot see: MCP servers, or an agent it could not follow (``why`` says which)."""

    node: cst.CSTNode = attrs.field(eq=False)
    why: str = MCP_WHY


def argument(call: cst.Call, position: int, name: str) -> cst.BaseExpression | None:
    """What ``call`` passes for the parameter ``name`` at ``position``: by keyword, else by position."""
    by_keyword = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
    if by_keyword is not None:
        return by_keyword
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[position] if 0 <= position < len(positional) else None


def tools_in_args(args: Sequence[cst.Arg]) -> Iterator[cst.BaseExpression | McpServers]:
    for arg in args:
        keyword = arg.keyword.value if arg.keyword else None
        if keyword in {"tools", "functions"}:
            yield arg.value
        elif keyword == "mcp_servers":
            yield McpServers(arg.value)
        elif keyword in {"config", "generation_config"}:
            if isinstance(arg.value, cst.Call):
                yield from tools_in_args(arg.value.args)
            elif isinstance(arg.value, cst.Dict):
                for element in arg.value.elements:
                    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                        if literal(element.key) == "tools":
                            yield element.value


PRIMARY_KEYWORDS = frozenset({"sql", "query", "statement", "code", "source", "html", "cmd", "command", "args", "expression"})


def is_primary(call: cst.Call, arg: cst.Arg) -> bool:
    """The argument an injection sink interprets: the SQL text, not its bound parameters."""
    if arg.keyword is not None:
        return arg.keyword.value in PRIMARY_KEYWORDS
    positional = [a for a in call.args if a.keyword is None]
    return bool(positional) and positional[0] is arg


def param_for(function: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> str | None:
    return param_at([p.name.value for p in (*function.params.posonly_params, *function.params.params)], call, arg)


def param_at(positional: Sequence[str], call: cst.Call, arg: cst.Arg) -> str | None:
    """The parameter ``arg`` of ``call`` binds, of a function whose positional parameters are ``positional``."""
    params = list(positional)
    if params and params[0] in {"self", "cls"}:
        params = params[1:]
    if arg.keyword is not None:
        return arg.keyword.value
    position = [a for a in call.args if a.keyword is None].index(arg)
    return params[position] if position < len(params) else None


# Fields that hold the model's payload: testing them only asks "is there any?".
_PAYLOAD_NAMES = frozenset({
    "content", "text", "choices", "delta", "message", "messages", "output", "output_text", "tool_calls",
    "data", "result", "results", "parts", "candidates", "response", "body", "usage", "error", "errors",
    "refusal", "parsed", "function_call", "stop_reason", "finish_reason",
})  # fmt: skip


def trivial_test(test: cst.CSTNode) -> bool:
    """Emptiness and failure checks choose nothing: ``if not out:``, ``if chunk.delta.content:``,
    ``if out is None:``, ``if len(out.choices) > 0:``, ``if not summary.strip():``, ``if text.strip() == "":``,
    ``while start < len(text):``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return trivial_test(test.expression)
    if isinstance(test, cst.NamedExpr):  # if (out := ...): tests the name, as out = ...; if out: does
        return trivial_test(test.target)
    if isinstance(test, cst.Name):
        return True
    if isinstance(test, cst.Attribute):
        # if decision.approved: is a choice; if chunk.delta.content: only checks for text.
        return test.attr.value in _PAYLOAD_NAMES
    if isinstance(test, cst.Subscript):
        key = test.slice[0].slice if len(test.slice) == 1 else None
        value = key.value if isinstance(key, cst.Index) else None
        text = literal(value) if isinstance(value, cst.SimpleString) else None
        return text is None or text in _PAYLOAD_NAMES
    if isinstance(test, cst.BooleanOperation):
        constant = {("True", cst.Or), ("False", cst.And)}
        if any(isinstance(side, cst.Name) and (side.value, type(test.operator)) in constant for side in (test.left, test.right)):
            return True  # if True or result.success: a check switched off, always the same arm
        return trivial_test(test.left) and trivial_test(test.right)
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value in {"hasattr", "bool", "len", "getattr"}:
        return True
    if _stripped(test):
        return True  # if answer.strip(): is there any text besides blanks
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if isinstance(target.operator, cst.Is | cst.IsNot) and isinstance(target.comparator, cst.Name):
            return True
        sides = (test.left, target.comparator)
        if isinstance(target.operator, cst.Equal | cst.NotEqual) and any(_empty_text(side) for side in sides):
            return True  # summary.strip() == "": blank or not
        # len(out) > 0, and while start < len(text): the text's length walked through, not a choice
        return any(isinstance(side, cst.Call) and isinstance(side.func, cst.Name) and side.func.value == "len" for side in sides)
    return False


def _stripped(node: cst.CSTNode) -> bool:
    """``text.strip()`` (``lstrip``, ``rstrip``) without arguments: the text less its blanks."""
    return (
        isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in {"strip", "lstrip", "rstrip"}
    )  # fmt: skip


def _empty_text(node: cst.CSTNode) -> bool:
    """``""`` or ``''``: the empty string a text is compared with to ask whether it has any."""
    return isinstance(node, cst.SimpleString) and literal(node) == ""


def branch_bodies(statement: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(statement, cst.If):
        return [statement.body, *([statement.orelse] if statement.orelse else [])]
    if isinstance(statement, cst.While):
        return [statement.body]
    if isinstance(statement, cst.IfExp):
        return [statement.body, statement.orelse]
    if isinstance(statement, cst.Match):
        return list(statement.cases)
    return []


def short_name(func: cst.Name | cst.Attribute) -> str:
    return func.value if isinstance(func, cst.Name) else func.attr.value


def short_name_or_none(func: cst.BaseExpression) -> str | None:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in {"self", "cls"}:
        return func.attr.value
    return None


def is_formatted(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.FormattedString):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo | cst.Add):
        return True
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format"


def string_text(node: cst.CSTNode) -> str:
    if isinstance(node, cst.SimpleString):
        text = literal(node)
        return node.value if text is None else text
    if isinstance(node, cst.ConcatenatedString):
        return string_text(node.left) + string_text(node.right)
    if isinstance(node, cst.FormattedString):
        return "".join(p.value for p in node.parts if isinstance(p, cst.FormattedStringText))
    return ""


def literal(node: cst.BaseExpression) -> str | None:
    """The text of a plain string literal, or None.

    Quietly: evaluating "\\d" warns (an error under -W error, a SyntaxWarning
    on newer Pythons), and real code is full of such regex literals.
    """
    if not isinstance(node, cst.SimpleString):
        return None
    plain = _plain_literal(node.value)
    if plain is not None:
        return plain
    try:
        if "\\" in node.value:  # only an escape can warn: the warnings' machinery only then
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = node.evaluated_value
        else:
            value = node.evaluated_value
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else value.decode("latin-1")


def _plain_literal(token: str) -> str | None:
    """The text of a string token that holds no escape, without asking Python's parser (what
    ``evaluated_value`` does, a parse per literal); None when only Python can say: an escape,
    a carriage return (Python's parser turns \\r\\n into \\n), a NUL, non-ASCII bytes."""
    if "\\" in token or "\r" in token or "\0" in token:
        return None
    quote = min(token.find("'"), token.find('"'), key=lambda at: len(token) if at < 0 else at)
    prefix = token[:quote].lower()
    width = 3 if token.startswith(token[quote] * 3, quote) and len(token) - quote >= 6 else 1
    text = token[quote + width : len(token) - width]
    return None if "b" in prefix and not text.isascii() else text


def dotted_tail(node: cst.BaseExpression) -> str | None:
    """The attribute chain after the receiver: ``self.client.chat.create`` -> ``client.chat.create``."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    return ".".join(reversed(parts)) if parts else None


def annotated_class(
    annotation: cst.BaseExpression, qualified: Callable[[cst.BaseExpression], str | None], *, generic: bool = False, depth: int = 0
) -> cst.BaseExpression | None:
    """The class an annotation names, as written there (a name or a dotted name): ``"tools.Tool"`` parsed
    (a quoted annotation, twice at most), ``Optional[X]`` (``qualified`` says which name is
    ``typing.Optional``) and ``X | None`` their ``X``; with ``generic`` (a registry's handed-in objects), the
    generic class a subscript writes instead (``Tool[Any]``: ``Tool``; ``Optional[Tool]``: ``Optional``, as
    registries.py always read it) and nothing for ``X | None``. None for anything else: ``Callable[...]``,
    ``list[X]`` without ``generic``, a union of two classes. The one answer for the registries' handed-in
    objects, the classes other modules' annotations hold (crossref) and a property's value (output_flow);
    each names the class its own way."""
    if isinstance(annotation, cst.SimpleString):
        if depth >= 2:
            return None
        try:
            parsed = cst.parse_expression(literal(annotation) or "")
        except (cst.ParserSyntaxError, TypeError):
            return None
        return annotated_class(parsed, qualified, generic=generic, depth=depth + 1)
    if isinstance(annotation, cst.Subscript):
        if generic:  # the generic class as written, Optional[X]'s Optional too
            return annotated_class(annotation.value, qualified, generic=generic, depth=depth + 1)
        one = annotation.slice[0].slice if len(annotation.slice) == 1 else None
        if isinstance(one, cst.Index) and qualified(annotation.value) == "typing.Optional":
            return annotated_class(one.value, qualified, depth=depth + 1)
        return None
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        right = annotation.right
        if isinstance(right, cst.Name) and right.value == "None" and not generic:  # Conversation | None
            return annotated_class(annotation.left, qualified, depth=depth + 1)
        return None
    return annotation if isinstance(annotation, cst.Name | cst.Attribute) else None
