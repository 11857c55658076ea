"""What the guard shows a reviewer: the model's output as text, streams buffered.

A streamed result is read to the end before review so the reviewer sees the
whole output; the caller then gets a replay of the same chunks, iterated like
the original stream (other attributes pass through to it). Lives here rather
than in ``escalated.guard`` to keep that module small; it imports nothing
heavy because it runs inside agents.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any


def _is_sync_stream(value: Any) -> bool:
    return hasattr(value, "__next__") and not isinstance(value, (str, bytes))


def buffer_sync(result: Any) -> tuple[Any, str]:
    """Streams are read to the end so the reviewer sees the whole output; the caller gets a replay."""
    if not _is_sync_stream(result):
        return result, render_output(result)
    chunks = list(result)
    return _Replay(result, chunks), _render_chunks(chunks)


async def buffer_async(result: Any) -> tuple[Any, str]:
    if hasattr(result, "__anext__"):
        chunks = [chunk async for chunk in result]
        return _AsyncReplay(result, chunks), _render_chunks(chunks)
    return buffer_sync(result)


class _Replay:
    """The buffered chunks, iterated like the original stream; other attributes pass through."""

    def __init__(self, original: Any, chunks: list[Any]):
        self._original = original
        self._buffered = chunks
        self._chunks = iter(chunks)

    def __iter__(self) -> _Replay:
        return self

    def __next__(self) -> Any:
        return next(self._chunks)

    def __enter__(self) -> _Replay:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        close = getattr(self._original, "close", None)
        if callable(close):
            close()

    @property
    def text_stream(self) -> Iterator[str]:
        """Anthropic's ``stream.text_stream``, rebuilt from the buffered events."""
        return (t for t in (_chunk_text(c) for c in self._buffered) if t)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


class _AsyncReplay:
    def __init__(self, original: Any, chunks: list[Any]):
        self._original = original
        self._buffered = chunks
        self._chunks = iter(chunks)

    @property
    def text_stream(self) -> AsyncIterator[str]:
        async def texts() -> AsyncIterator[str]:
            for chunk in self._buffered:
                if text := _chunk_text(chunk):
                    yield text

        return texts()

    def __aiter__(self) -> _AsyncReplay:
        return self

    async def __anext__(self) -> Any:
        try:
            return next(self._chunks)
        except StopIteration:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _AsyncReplay:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        for name in ("aclose", "close"):
            closer = getattr(self._original, name, None)
            if callable(closer):
                outcome = closer()
                if inspect.isawaitable(outcome):
                    await outcome
                return

    aclose = close

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


def render_output(value: Any) -> str:
    """The model's output as text a reviewer can read: the answer and its tool calls first."""
    if isinstance(value, str):
        return value
    parsed = _parsed_raw_response(value)
    if parsed is not None:  # with_raw_response: the parsed message, not <APIResponse [200 OK]>
        return render_output(parsed)
    final = getattr(value, "final_output", None)
    if final is not None and not callable(final):  # OpenAI Agents RunResult(Streaming)
        return render_output(final)
    known = _known_shapes(value)
    if known:
        return known
    dump = getattr(value, "model_dump_json", None)  # other pydantic objects of the SDKs
    if callable(dump):
        with contextlib.suppress(Exception):  # a third-party dump failing must not break the guard
            return str(dump())
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def _parsed_raw_response(value: Any) -> Any:
    """``client.….with_raw_response.create()`` returns the HTTP response; ``parse()`` gives the message."""
    parse = getattr(value, "parse", None)
    if getattr(value, "http_response", None) is None or not callable(parse):
        return None
    with contextlib.suppress(Exception):  # a response that cannot be parsed is shown as it is
        parsed = parse()
        if inspect.isawaitable(parsed):  # the async variant: parsed on the caller's side instead
            close = getattr(parsed, "close", None)
            if callable(close):
                close()
            return None
        return parsed
    return None


def _known_shapes(value: Any) -> str:
    """Text and tool calls of OpenAI, Anthropic, LangChain and Google GenAI results; "" if unknown."""
    parts: list[str] = []
    message = _first_message(value)
    if message is not None:  # OpenAI chat completion
        value = message
    content = getattr(value, "content", None)
    if isinstance(content, str):  # OpenAI message, LangChain AIMessage
        parts.append(content)
    elif isinstance(content, list):  # Anthropic content blocks
        for block in content:
            if isinstance(getattr(block, "text", None), str):
                parts.append(block.text)
            elif getattr(block, "type", None) == "tool_use":
                parts.append(f"tool call: {block.name}({_json(getattr(block, 'input', None))})")
    elif isinstance(getattr(value, "output_text", None), str):  # OpenAI responses
        parts.append(value.output_text)
    elif isinstance(getattr(value, "text", None), str):  # Google GenAI
        parts.append(value.text)
    parts += [f"tool call: {name}({args})" for name, args in _tool_calls(value)]
    return "\n".join(p for p in parts if p)


def _first_message(value: Any) -> Any:
    choices = getattr(value, "choices", None)
    if isinstance(choices, list) and choices:
        return getattr(choices[0], "message", None)
    return None


def _tool_calls(message: Any) -> list[tuple[str, str]]:
    calls = getattr(message, "tool_calls", None) or []
    out = []
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):  # LangChain: {"name", "args", "id"}
            out.append((str(call.get("name")), _json(call.get("args"))))
        elif getattr(call, "function", None) is not None:  # OpenAI: call.function.name / .arguments
            out.append((str(call.function.name), str(call.function.arguments)))
    return out


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def _chunk_text(chunk: Any) -> str | None:
    """The text delta of a streamed chunk, for the common providers."""
    if isinstance(chunk, str):
        return chunk
    with contextlib.suppress(AttributeError, IndexError, TypeError):
        return chunk.choices[0].delta.content  # OpenAI chat completions
    for path in (("delta", "text"), ("content",), ("text",)):  # Anthropic events, LangChain chunks
        value: Any = chunk
        for attr in path:
            value = getattr(value, attr, None)
        if isinstance(value, str):
            return value
    return None


def _render_chunks(chunks: list[Any]) -> str:
    texts = [_chunk_text(c) for c in chunks]
    if chunks and any(t for t in texts):
        return "".join(t or "" for t in texts)
    return "\n".join(render_output(c) for c in chunks)


class GuardedRunStream:
    """``Runner.run_streamed``: the run happens while its events are iterated, in the caller's loop.

    ``stream_events()`` reads every event, then awaits ``settle`` with the run's
    final output (a decision for ``required``: the loop keeps running while the
    human decides), then replays the events. Other attributes pass through.
    """

    def __init__(self, run: Any, *, settle: Callable[[str], Awaitable[None]]):
        self._run = run
        self._settle = settle

    async def stream_events(self) -> AsyncIterator[Any]:
        events = [event async for event in self._run.stream_events()]
        await self._settle(render_output(self._run))
        for event in events:
            yield event

    def __getattr__(self, name: str) -> Any:
        return getattr(self._run, name)


def is_context_manager(value: Any) -> bool:
    """A stream handed out as a context manager (Anthropic's ``messages.stream``), not an iterator."""
    if hasattr(value, "__next__") or hasattr(value, "__anext__"):
        return False
    return (hasattr(value, "__enter__") and hasattr(value, "__exit__")) or (
        hasattr(value, "__aenter__") and hasattr(value, "__aexit__")
    )


class GuardedContext:
    """Runs the guard on what the wrapped manager yields, inside ``with`` / ``async with``.

    ``finish`` / ``finish_async`` buffer the stream, review or decide, and return
    what the block should see. If they raise (a rejection), the original
    manager is still exited so its connection is released.
    """

    def __init__(self, manager: Any, *, finish: Callable[[Any], Any], finish_async: Callable[[Any], Awaitable[Any]]):
        self._manager = manager
        self._finish = finish
        self._finish_async = finish_async

    def __enter__(self) -> Any:
        inner = self._manager.__enter__()
        try:
            return self._finish(inner)
        except BaseException:
            self._manager.__exit__(*sys.exc_info())
            raise

    def __exit__(self, *exc_info: Any) -> Any:
        return self._manager.__exit__(*exc_info)

    async def __aenter__(self) -> Any:
        inner = await self._manager.__aenter__()
        try:
            return await self._finish_async(inner)
        except BaseException:
            await self._manager.__aexit__(*sys.exc_info())
            raise

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._manager.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._manager, name)
