"""A process in which the kernel's confinement is blocked, as some containers block it.

:func:`block` loads a seccomp filter into the calling process (and so into every
process it starts) that makes the Landlock system calls, or the ``seccomp`` ones, fail
with ``ENOSYS``, as on a kernel without them or under a container's seccomp policy.
Run as a program, it blocks, then executes the rest of its arguments::

    python -m tests.core.sandbox.blocked landlock,seccomp /path/to/gunicorn ARGS...
"""

from __future__ import annotations

import errno
import os
import sys

import pyseccomp

PR_SET_SECCOMP = 22

GROUPS: dict[str, tuple[str, ...]] = {
    "landlock": ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"),
    "seccomp": ("seccomp",),  # and prctl(PR_SET_SECCOMP), below
}


def block(groups: list[str]) -> None:
    """Make the system calls of ``groups`` (``landlock``, ``seccomp``) fail with ENOSYS
    in this process and its children, for good."""
    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    enosys = pyseccomp.ERRNO(errno.ENOSYS)
    for group in groups:
        for name in GROUPS[group]:
            rules.add_rule(enosys, name)
        if group == "seccomp":
            rules.add_rule(enosys, "prctl", pyseccomp.Arg(0, pyseccomp.EQ, PR_SET_SECCOMP))
    rules.load()


def main() -> None:
    groups, program, *arguments = sys.argv[1:]
    block([group for group in groups.split(",") if group])
    os.execv(program, [program, *arguments])


if __name__ == "__main__":
    main()
