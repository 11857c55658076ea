"""The rewrite itself: wrap forms, formatting kept, import once, never twice, unsafe calls skipped."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from escalated.contracts.calls import Location
from escalated.contracts.edit.rewrite import Target, rewrite_source


def locate(source: str, call_text: str, *, nth: int = 0, prefix: bool = False) -> Location:
    """The span of the nth call whose code is ``call_text`` (as a scanner reports it)."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    spans = sorted(
        (r.start.line, r.start.column, r.end.line, r.end.column)
        for n, r in wrapper.resolve(PositionProvider).items()
        if isinstance(n, cst.Call) and _matches(wrapper.module.code_for_node(n.with_changes(lpar=[], rpar=[])), call_text, prefix)
    )
    return Location("m.py", *spans[nth])


def _matches(code: str, text: str, prefix: bool) -> bool:
    return code.startswith(text) if prefix else code == text


def wrap(source: str, *calls: tuple[str, str]) -> str:
    targets = [Target(locate(source, text), cid) for text, cid in calls]
    return rewrite_source(source, targets).code.decode()


def test_a_sync_call_is_wrapped_in_a_lambda_and_the_import_added_after_the_imports():
    source = '"""Doc."""\nimport openai\n\nclient = openai.OpenAI()\nr = client.chat.completions.create(model="m")\n'
    assert wrap(source, ('client.chat.completions.create(model="m")', "m.module")) == (
        '"""Doc."""\nimport openai\nfrom escalated.guard import guard\n\nclient = openai.OpenAI()\n'
        'r = guard("m.module", lambda: client.chat.completions.create(model="m"))\n'
    )


def test_an_awaited_call_keeps_the_await_outside_the_guard():
    source = "import x\n\nasync def f(c):\n    return await c.messages.create(max_tokens=1)\n"
    out = wrap(source, ("c.messages.create(max_tokens=1)", "m.f"))
    assert 'return await guard("m.f", lambda: c.messages.create(max_tokens=1))' in out


def test_formatting_and_comments_inside_the_call_are_kept():
    source = "import x\n\n\ndef f(c):\n    r = c.create(\n        a=1,  # why a is 1\n        b=[\n            2,\n        ],\n    )\n"
    target = Target(locate(source, "c.create(", prefix=True), "m.f")
    out = rewrite_source(source, [target]).code.decode()
    assert out.endswith(
        '    r = guard("m.f", lambda: c.create(\n        a=1,  # why a is 1\n        b=[\n            2,\n        ],\n    ))\n'
    )


def test_the_import_is_added_once_for_many_calls_and_not_again_when_present():
    source = "from escalated.guard import guard\nimport x\na = c.create(1)\nb = c.create(2)\n"
    out = wrap(source, ("c.create(1)", "m.a"), ("c.create(2)", "m.b"))
    assert out.count("from escalated.guard import guard") == 1
    assert 'a = guard("m.a", lambda: c.create(1))' in out and 'b = guard("m.b", lambda: c.create(2))' in out


def test_the_import_goes_after_a_docstring_and_future_import_when_there_are_no_others():
    source = '"""Doc."""\nfrom __future__ import annotations\nx = c.create()\n'
    out = wrap(source, ("c.create()", "m.x"))
    assert out.startswith('"""Doc."""\nfrom __future__ import annotations\nfrom escalated.guard import guard\n')


def test_a_wrapped_call_is_never_wrapped_twice():
    source = "import x\nr = c.create(1)\n"
    once = wrap(source, ("c.create(1)", "m.r"))
    again = rewrite_source(once, [Target(locate(once, "c.create(1)"), "m.r")])
    assert not again.changed and again.code.decode() == once and len(again.already_guarded) == 1
    # Even a span that lands on the wrapper itself is recognised.
    outer = rewrite_source(once, [Target(locate(once, 'guard("m.r", lambda: c.create(1))'), "m.r")])
    assert not outer.changed


def test_parenthesised_and_nested_calls_are_wrapped_independently():
    source = "import x\nr = (c.create(m=c.create(2)))\n"
    out = wrap(source, ("c.create(m=c.create(2))", "m.outer"), ("c.create(2)", "m.inner"))
    assert 'r = (guard("m.outer", lambda: c.create(m=guard("m.inner", lambda: c.create(2)))))' in out


def test_line_endings_and_encoding_are_kept():
    source = "# -*- coding: latin-1 -*-\r\nimport x\r\ns = 'caf\xe9'\r\nr = c.create(s)\r\n".encode("latin-1")
    target = Target(locate(source.decode("latin-1"), "c.create(s)"), "m.r")
    out = rewrite_source(source, [target]).code
    assert out == (
        "# -*- coding: latin-1 -*-\r\nimport x\r\nfrom escalated.guard import guard\r\ns = 'caf\xe9'\r\n"
        'r = guard("m.r", lambda: c.create(s))\r\n'
    ).encode("latin-1")


@pytest.mark.parametrize(
    "source, call, reason",
    [
        ("async def f():\n    await c.create(x=await g())\n", "c.create(x=await g())", "await"),
        ("def f():\n    c.create(x=(yield))\n", "c.create(x=(yield))", "yield"),
        ("def f():\n    c.create(x=(n := 1))\n    return n\n", "c.create(x=(n := 1))", ":="),
        ("class A(B):\n    def f(self):\n        return super().create()\n", "super().create()", "super"),
        ("class A:\n    m = 'x'\n    r = c.create(m)\n", "c.create(m)", "class body"),
        ("def f():\n    return f'{c.create()}'\n", "c.create()", "f-string"),
        ("def f(guard):\n    return c.create()\n", "c.create()", "binds the name 'guard'"),
    ],
)
def test_calls_a_lambda_would_change_are_skipped_with_the_reason(source, call, reason):
    result = rewrite_source(source, [Target(locate(source, call), "m.f")])
    assert not result.changed and result.code.decode() == source
    assert reason in result.skipped[0].reason


def test_a_location_matching_no_call_is_reported_not_guessed():
    result = rewrite_source("r = c.create()\n", [Target(Location("m.py", 9, 0, 9, 10), "m.r")])
    assert not result.changed and result.skipped[0].reason == "call not found at this location"


def test_rewritten_code_compiles():
    source = "import x\n\nasync def f(c, xs):\n    return [await c.create(i) for i in xs]\n"
    out = wrap(source, ("c.create(i)", "m.f"))
    compile(out, "m.py", "exec")
    assert 'await guard("m.f", lambda: c.create(i))' in out


def test_a_call_wrapped_with_another_contracts_id_is_reported_not_rewrapped():
    source = 'from escalated.guard import guard\nr = guard("old.id", lambda: c.create(1))\n'
    result = rewrite_source(source, [Target(locate(source, "c.create(1)"), "new.id")])
    assert not result.changed
    assert "already wrapped in guard 'old.id', but its contract is 'new.id'" in result.skipped[0].reason
