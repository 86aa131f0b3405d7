"""seccomp: the kernel refuses a git reader every way to reach another service.

A git reader reads files; it needs no socket. :func:`forbid_sockets` loads a seccomp
filter, for good, into the calling process (and every thread and child it has or
starts): the system calls that create, bind, connect, accept or send on a socket fail
with ``EACCES`` (:data:`FORBIDDEN`) — so no TCP, no UDP, no UNIX socket (PostgreSQL's,
an abstract one), no netlink; ``io_uring``, which can open and connect sockets without
those calls, fails with ``ENOSYS``; and taking a descriptor (a socket) out of another
process, or reading its memory, fails with ``EPERM``. A system call of another ABI (the
32-bit x86 one, whose ``socketcall`` the filter does not look at) kills the process.
Every other system call is allowed. Landlock says the same of what it knows (TCP from
its ABI 4, abstract UNIX sockets from ABI 6); UDP and UNIX sockets with a path are this
filter's alone.

The filter is built by libseccomp (Debian's ``libseccomp2``) through pyseccomp, ctypes
bindings with the API of libseccomp's own Python bindings. Where it cannot be had (not
Linux, no libseccomp, a kernel without seccomp filters, a policy that blocks the
``seccomp`` system call), :func:`seccomp_status` says why and :func:`forbid_sockets`
raises :class:`SeccompUnavailable`: the caller decides what runs without it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import sys
from dataclasses import dataclass
from types import ModuleType

__all__ = [
    "FORBIDDEN",
    "SeccompStatus",
    "SeccompUnavailable",
    "forbid_sockets",
    "seccomp_status",
]

FORBIDDEN: dict[str, int] = {
    **dict.fromkeys(
        (
            "socket",
            "socketpair",
            "bind",
            "connect",
            "listen",
            "accept",
            "accept4",
            "sendto",
            "sendmsg",
            "sendmmsg",
        ),
        errno.EACCES,
    ),
    **dict.fromkeys(("io_uring_setup", "io_uring_enter", "io_uring_register"), errno.ENOSYS),
    **dict.fromkeys(
        ("ptrace", "pidfd_getfd", "process_vm_readv", "process_vm_writev"), errno.EPERM
    ),
}
"""The system calls a git reader may not make, and the error each then fails with."""

_FILTER_API = 2
"""libseccomp's API level that proves the kernel's ``seccomp`` system call (and filter
synchronisation across threads)."""


class SeccompUnavailable(OSError):
    """The kernel cannot filter this process's system calls; the message says why."""


@dataclass(frozen=True)
class SeccompStatus:
    """Whether a seccomp filter can be loaded here and, when not, why (for people)."""

    available: bool
    reason: str | None = None


_SONAMES = {"c": "libc.so.6", "seccomp": "libseccomp.so.2"}
"""The libraries pyseccomp looks up, by the names glibc's loader knows them by."""


def _find_library(name: str) -> str | None:
    """``ctypes.util.find_library`` without a program: the soname when it loads (glibc),
    else the standard look-up (which runs ``ldconfig -p``)."""
    soname = _SONAMES.get(name)
    if soname is not None:
        try:
            ctypes.CDLL(soname)
        except OSError:
            pass
        else:
            return soname
    return _standard_find_library(name)


_standard_find_library = ctypes.util.find_library


@functools.cache
def _bindings() -> ModuleType | str:
    """pyseccomp, or why it cannot be loaded (imported once, with libseccomp looked up
    by its soname: a git reader starts no program, not even ``ldconfig``)."""
    try:
        ctypes.util.find_library = _find_library
        import pyseccomp
    except ImportError:
        return "the pyseccomp package is not installed"
    except (OSError, RuntimeError) as exc:  # "Unable to find libseccomp"
        return f"libseccomp cannot be loaded ({exc}; Debian: apt-get install libseccomp2)"
    finally:
        ctypes.util.find_library = _standard_find_library
    return pyseccomp


def seccomp_status() -> SeccompStatus:
    """Whether this machine can load the filter: libseccomp's bindings, and the kernel's
    ``seccomp`` system call (libseccomp asks the kernel; nothing is loaded)."""
    if sys.platform != "linux":
        return SeccompStatus(False, f"seccomp is a Linux feature; this is {sys.platform}")
    bindings = _bindings()
    if isinstance(bindings, str):
        return SeccompStatus(False, bindings)
    try:
        api = int(bindings.get_api())
    except (NotImplementedError, OSError) as exc:  # pragma: no cover - libseccomp < 2.4
        return SeccompStatus(False, f"libseccomp cannot tell what the kernel offers: {exc}")
    if api < _FILTER_API:
        return SeccompStatus(
            False,
            "the kernel refuses seccomp filters (its seccomp system call is missing or "
            "blocked by the policy this process runs under)",
        )
    return SeccompStatus(True)


def load_bindings() -> None:
    """Load libseccomp now: a worker does it before it confines itself (where libseccomp
    is not found by its soname, finding it runs ``ldconfig``, a program)."""
    _bindings()


def forbid_sockets() -> int:
    """Load the filter (see the module docstring) into the calling process, for good;
    the number of system calls it forbids. Raises :class:`SeccompUnavailable` when it
    cannot; then nothing was loaded."""
    status = seccomp_status()
    bindings = _bindings()
    if not status.available or isinstance(bindings, str):
        raise SeccompUnavailable(errno.ENOSYS, status.reason or "seccomp is unavailable")
    try:
        rules = bindings.SyscallFilter(bindings.ALLOW)
        rules.set_attr(bindings.Attr.ACT_BADARCH, bindings.KILL_PROCESS)
        rules.set_attr(bindings.Attr.CTL_TSYNC, 1)
        forbidden = 0
        for name, error in FORBIDDEN.items():
            if bindings.resolve_syscall(bindings.Arch.NATIVE, name) < 0:
                continue  # not a system call of this architecture (or unknown to libseccomp)
            rules.add_rule(bindings.ERRNO(error), name)
            forbidden += 1
        rules.load()
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise SeccompUnavailable(
            exc.errno or errno.EPERM, f"the filter was refused: {reason}"
        ) from exc
    return forbidden
