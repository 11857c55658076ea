"""Guard at the tool: the contract's mode applied where an agent runner runs a tool.

An agent runner (OpenAI Agents ``Runner.run``, a LangGraph prebuilt agent, a
CrewAI crew) runs its tools inside the call, so a guard around the call
decides after the refund already happened. ``guard_tool`` puts the contract on
the tool function itself::

    @function_tool
    @guard_tool("billing.issue_refund", awaitable=True)
    def issue_refund(charge_id: str) -> str: ...

``required``: the tool call the model chose (name and arguments) is filed as
the evidence and the tool body runs only once a reviewer approves; otherwise
``EscalationRejected`` / ``GuardFailedClosed`` is raised and nothing ran.
``reviewed`` / ``sampled``: the tool runs, then the call and its result are
filed for review. ``autonomous``: the tool runs untouched. The wrapper keeps
the function's name, signature, annotations and docstring (``functools.wraps``),
which is what the frameworks read to build the tool's schema. The OpenAI Agents
SDK calls a sync tool inside its running event loop, where a sync guard can only
fail closed: ``awaitable=True`` makes the guarded tool a coroutine function it
awaits (``contracts apply`` sets it for tools an Agents SDK run reaches).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from escalated.agent.toolcall import ToolCall, arguments_of
from escalated.guard import runtime as _guard
from escalated.guard.render import render_output

__all__ = ["guard_tool", "tool_arguments"]

F = TypeVar("F", bound=Callable[..., Any])


def guard_tool(contract_id: str, /, *, awaitable: bool = False) -> Callable[[F], F]:
    """Decorate a tool function with the mode of contract ``contract_id``.

    ``awaitable=True`` makes a sync tool a coroutine function: for frameworks that
    await coroutine tools but call sync ones inside their running event loop (the
    OpenAI Agents SDK), where a sync guard could not wait for the reviewer without
    blocking that loop. The tool's body still runs as written, after the decision.
    """

    def decorate(tool: F) -> F:
        source_file = tool.__code__.co_filename if hasattr(tool, "__code__") else __file__
        if inspect.iscoroutinefunction(tool) or awaitable:
            run = tool if inspect.iscoroutinefunction(tool) else _as_coroutine(tool)

            @functools.wraps(tool)
            async def guarded_async(*args: Any, **kwargs: Any) -> Any:
                contract = _guard._contract_for(contract_id, caller_file=source_file)
                if contract.mode == "autonomous":
                    return await run(*args, **kwargs)
                call = _guard._next_call(contract)
                asked = _tool_call(tool, contract, call, args, kwargs)
                if contract.mode == "required":
                    await _guard._settle_async(contract, call, "", tool_call=asked)  # raises unless approved
                    return await run(*args, **kwargs)
                result = await run(*args, **kwargs)
                await _guard._settle_async(contract, call, render_output(result), tool_call=asked)
                return result

            return guarded_async  # type: ignore[return-value]

        @functools.wraps(tool)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            contract = _guard._contract_for(contract_id, caller_file=source_file)
            if contract.mode == "autonomous":
                return tool(*args, **kwargs)
            call = _guard._next_call(contract)
            asked = _tool_call(tool, contract, call, args, kwargs)
            if contract.mode == "required":
                _guard._decide_sync(contract, call, "", tool_call=asked)  # raises unless approved
                return tool(*args, **kwargs)
            result = tool(*args, **kwargs)
            _guard._review_sync(contract, call, render_output(result), tool_call=asked)
            return result

        return guarded  # type: ignore[return-value]

    return decorate


# What LangChain/LangGraph pass a tool themselves (its config, the graph's state or store, the
# call id): a plain dict at run time, so told apart by the parameter's annotation.
_INJECTED = ("RunnableConfig", "InjectedState", "InjectedStore", "InjectedToolArg", "InjectedToolCallId", "ToolRuntime")


def _injected(parameter: inspect.Parameter) -> bool:
    annotation = parameter.annotation
    written = annotation if isinstance(annotation, str) else repr(annotation)
    return any(name in written for name in _INJECTED)


def _as_coroutine(tool: Callable[..., Any]) -> Callable[..., Any]:
    async def run(*args: Any, **kwargs: Any) -> Any:
        return tool(*args, **kwargs)

    return run


def _tool_call(tool: Callable[..., Any], contract: Any, call: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ToolCall:
    """The call the model asked for, described as every adapter describes one (``agent/toolcall``).

    Arguments are bound to the tool's parameter names; a framework's run
    context among them (the Agents SDK's ``ToolContext``, Pydantic AI's
    ``RunContext``) is left out: the model did not choose it, and it can hold
    anything (46 KB of private state in one real support agent).
    """
    owner = _tool_object(tool, args)
    if owner is not None:  # a tool class's method (smolagents' Tool.forward): the tool is the object
        name, description = getattr(owner, "name", None), getattr(owner, "description", None)
        return ToolCall(
            name=name if isinstance(name, str) and name else type(owner).__name__,
            call_id=f"{contract.id}:{call.ordinal}",
            arguments=tool_arguments(functools.partial(tool, owner), args[1:], kwargs),
            description=description if isinstance(description, str) else inspect.getdoc(tool),
        )
    return ToolCall(
        name=getattr(tool, "__name__", "tool"),
        call_id=f"{contract.id}:{call.ordinal}",
        arguments=tool_arguments(tool, args, kwargs),
        description=inspect.getdoc(tool),
    )


def _tool_object(tool: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """The object a method was called on, when ``tool`` is a method (its first parameter ``self``)."""
    try:
        first = next(iter(inspect.signature(tool).parameters), None)
    except (TypeError, ValueError):
        return None
    return args[0] if first == "self" and args else None


def tool_arguments(tool: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of one call of ``tool`` by parameter name, what the framework passes itself left out."""
    try:
        signature = inspect.signature(tool)
        values = dict(signature.bind_partial(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        values = {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}
    else:
        values = {k: v for k, v in values.items() if k not in signature.parameters or not _injected(signature.parameters[k])}
    return arguments_of(values)
