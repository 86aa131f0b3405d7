"""Reading untrusted repositories in processes the kernel confines.

``landlock`` restricts a process to reading beneath given paths (Linux's Landlock);
``worker`` is the git reader that confines itself that way, with an address-space
limit, before it reads anything; ``pool`` keeps a few such workers per server process,
serves each request from one within its deadline, and kills a worker whose read
outlives it. The ``git:`` resolver (``sysprompt_core.variables.git``) reads through it.
"""

from __future__ import annotations

from sysprompt_core.sandbox.landlock import (
    LandlockStatus,
    LandlockUnavailable,
    confine_to_reading,
    landlock_status,
)
from sysprompt_core.sandbox.pool import Exchange, Outcome, WorkerPool, WorkerSpec

__all__ = [
    "Exchange",
    "LandlockStatus",
    "LandlockUnavailable",
    "Outcome",
    "WorkerPool",
    "WorkerSpec",
    "confine_to_reading",
    "landlock_status",
]
