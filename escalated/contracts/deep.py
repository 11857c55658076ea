"""Room for deep syntax trees: a thread with a large stack and a high recursion limit."""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")

# Long but valid expressions (a 500-term sum) nest as deep as they are long; libcst
# walks them recursively. A thread with a large stack lets that recursion run instead
# of declaring the file unanalysable; only the pages actually used cost memory.
_DEEP_STACK_BYTES = 512 * 1024 * 1024
_DEEP_RECURSION = 60_000
_deep_lock = threading.Lock()
_THREAD_NAME = "escalated-deep-stack"


def deep_stack(work: Callable[[], _T]) -> _T:
    """Run ``work`` in a thread with a large stack and a high recursion limit."""
    if threading.current_thread().name == _THREAD_NAME:
        return work()  # already there (init scans, then rewrites)
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as error:
            box["error"] = error

    with _deep_lock:
        thread = _start(run)
        if thread is None:  # no room for a big stack here (ulimit -v): as deep as Python allows
            return work()
        previous_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(previous_limit, _DEEP_RECURSION))
        try:
            thread.join()
        finally:
            sys.setrecursionlimit(previous_limit)
    if "error" in box:
        raise box["error"]
    return box["value"]


def _start(run: Callable[[], None]) -> threading.Thread | None:
    for size in (_DEEP_STACK_BYTES, _DEEP_STACK_BYTES // 8):
        previous = threading.stack_size(size)
        try:
            thread = threading.Thread(target=run, name=_THREAD_NAME, daemon=True)
            thread.start()
            return thread
        except (RuntimeError, MemoryError):
            continue
        finally:
            threading.stack_size(previous)
    return None


def with_deep_stack(function: Callable[..., _T]) -> Callable[..., _T]:
    """Decorate a command so everything it does (scan, rewrite, render) has the room."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> _T:
        return deep_stack(lambda: function(*args, **kwargs))

    return wrapper
