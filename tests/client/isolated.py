"""Run a coroutine on a fresh event loop in its own thread.

The browser tests' Playwright (sync API) leaves an event loop running in the main
thread for the rest of the session, and ``asyncio.run`` refuses to start inside one;
a thread of its own has no loop, so these tests run the same whatever ran before.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_isolated(coroutine: Coroutine[Any, Any, T]) -> T:
    results: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            results.append(asyncio.run(coroutine))
        except BaseException as error:  # handed to the caller's thread
            errors.append(error)

    thread = threading.Thread(target=target, name="asyncio-test")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return results[0]
