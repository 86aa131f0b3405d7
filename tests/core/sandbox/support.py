"""A pool of probe workers (``probe_worker``) for the sandbox tests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sysprompt_core.limits import DEFAULT_GIT_RECYCLE_BYTES
from sysprompt_core.sandbox import Exchange, WorkerPool, WorkerSpec

REPO = Path(__file__).resolve().parents[3]
PROBE_COMMAND = (
    sys.executable,
    "-P",
    "-c",
    f"import sys; sys.path.insert(0, {str(REPO)!r}); "
    "from tests.core.sandbox.probe_worker import main; main()",
)
MIB = 1024 * 1024


def probe_pool() -> WorkerPool:
    return WorkerPool(PROBE_COMMAND)


def spec(
    *roots: Path,
    landlock: bool = True,
    memory_limit: int = 512 * MIB,
    allow_unconfined: bool | None = None,
    recycle_bytes: int = DEFAULT_GIT_RECYCLE_BYTES,
) -> WorkerSpec:
    """A probe worker's spec; without Landlock it reads unconfined unless told not to."""
    allow = not landlock if allow_unconfined is None else allow_unconfined
    return WorkerSpec.of(
        [str(root) for root in roots],
        memory_limit,
        landlock,
        allow_unconfined=allow,
        recycle_bytes=recycle_bytes,
    )


def run(
    pool: WorkerPool,
    worker: WorkerSpec,
    probe: str,
    path: object = "",
    *,
    seconds: float = 30,
    size: int = 1,
    limit: int = 1 * MIB,
    queue_seconds: float | None = None,
) -> Exchange:
    request: dict[str, Any] = {"probe": probe, "path": str(path)}
    return pool.run(
        worker,
        request,
        size=size,
        timeout=seconds,
        queue_timeout=seconds if queue_seconds is None else queue_seconds,
        max_message_bytes=limit,
    )


def errno_of(exchange: Exchange) -> int:
    [answer] = exchange.messages
    value = answer["errno"]
    assert isinstance(value, int)
    return value
