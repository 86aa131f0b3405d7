"""Reading untrusted repositories in processes the kernel confines.

``landlock`` restricts a process to reading beneath given paths (Linux's Landlock);
``syscalls`` forbids it every socket (a seccomp filter); ``confinement`` applies both
and fails closed where either is missing, unless the caller accepts unconfined readers;
``worker`` is the git reader that confines itself that way, with an address-space
limit, before it reads anything; ``pool`` keeps a few such workers per server process,
serves each request from one within its deadline, and kills a worker whose read
outlives it. The ``git:`` resolver (``sysprompt_core.variables.git``) reads through it.
"""

from __future__ import annotations

from sysprompt_core.sandbox.confinement import Confinement, unconfined_reason
from sysprompt_core.sandbox.landlock import (
    LandlockStatus,
    LandlockUnavailable,
    confine_to_reading,
    landlock_status,
)
from sysprompt_core.sandbox.pool import Exchange, Outcome, WorkerPool, WorkerSpec
from sysprompt_core.sandbox.syscalls import SeccompStatus, SeccompUnavailable, seccomp_status

__all__ = [
    "Confinement",
    "Exchange",
    "LandlockStatus",
    "LandlockUnavailable",
    "Outcome",
    "SeccompStatus",
    "SeccompUnavailable",
    "WorkerPool",
    "WorkerSpec",
    "confine_to_reading",
    "landlock_status",
    "seccomp_status",
    "unconfined_reason",
]
