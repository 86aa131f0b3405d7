"""A git reader: one long-lived worker process that confines itself before it reads.

:class:`~sysprompt_core.sandbox.pool.WorkerPool` starts it as ``python -P -m
sysprompt_core.sandbox.worker`` and speaks line-delimited JSON with it over its
standard input and output (one object per line, UTF-8). The life of a worker:

1. **Imports** everything it will run (pygit2, the git resolver), then moves its
   protocol output to a private descriptor so that nothing else written to standard
   output can corrupt it.
2. **Reads its spec** (one line): the allowed roots, the address-space limit, whether
   to use Landlock, and where libgit2 may look for the global git configuration.
3. **Prepares**, before anything it is asked to read: libgit2's configuration search
   paths (the system configuration never, the global one only where the spec says),
   pack windows small enough for the memory limit, the address-space limit
   (``RLIMIT_AS``), and the kernel's confinement
   (:func:`~sysprompt_core.sandbox.confinement.confine`): a seccomp filter that
   forbids every socket, then — unless the spec says not to — Landlock, read-only
   beneath the roots, nothing else.
4. **Answers** ``{"ready": true, "landlock": <ABI or 0>, "reason": …, "seccomp": …,
   "refused": …}``. ``refused`` is why it reads nothing: it lacks Landlock or the
   filter and the spec does not accept unconfined readers (``allow_unconfined``); it
   then answers every request with ``{"refused": …, "done": true}``, at once.
5. **Serves** one request at a time: ``{"names": [...], "directory": …,
   "max_file_bytes": …}`` → one ``{"name": …, "value": …}`` or ``{"name": …,
   "missing": …}`` line per value as soon as it is known, the last one with
   ``"done": true`` (and ``"exit"`` when the worker ends after it).
   A read that runs out of memory answers what it could not read as missing and the
   worker exits, as it does when, freed memory given back, it still holds more than
   the spec's ``recycle_bytes`` (default :data:`RECYCLE_BYTES`) above what it held when
   it started: a fresh process holds nothing. Its pool checks the same from ``/proc``
   as the read ends, and replaces a worker that grew.

The worker never writes a file and starts no process; its parent kills it at a
request's deadline (a request says how many ``seconds`` it has left, and an alarm ends
the worker a second after, should the parent be gone). An idle worker whose parent
died reads the end of its input and exits. :func:`serve` takes the request handler,
so a test can run its own probe in a worker confined exactly like this one.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import sys
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

import pygit2
from pygit2.enums import ConfigLevel

from sysprompt_core.limits import DEFAULT_GIT_RECYCLE_BYTES
from sysprompt_core.sandbox.confinement import Confinement, confine
from sysprompt_core.variables.git import read_repository
from sysprompt_core.variables.registry import Missing, ResolverOptions, Value

try:  # not on Windows
    import resource
except ImportError:  # pragma: no cover
    resource = None  # type: ignore[assignment]

RECYCLE_BYTES = DEFAULT_GIT_RECYCLE_BYTES
"""A worker whose resident memory is still more than this above where it started after
a request (and after ``malloc_trim``) exits, unless its spec's ``recycle_bytes`` says
another bound: a fresh process holds nothing."""

PACK_WINDOW_BYTES = 32 * 1024 * 1024
"""How much of a pack file libgit2 maps at once (its default, 1 GiB on 64-bit, would
use the address space up)."""

Message = dict[str, Any]
Send = Callable[..., None]
"""``send(message, last=False)``: one answer; the ``last`` one also ends the request
(one write instead of two, which a small read notices)."""
Handler = Callable[[Mapping[str, Any], Mapping[str, Any], Send], None]
"""``handler(spec, request, send)``: answers one request with ``send``."""

_LEVELS = {
    "global": ConfigLevel.GLOBAL,
    "xdg": ConfigLevel.XDG,
    "system": ConfigLevel.SYSTEM,
    "programdata": ConfigLevel.PROGRAMDATA,
}


class _Failed(Exception):
    """A read failed in a way that leaves the worker unfit to go on (out of memory)."""


def read_git(spec: Mapping[str, Any], request: Mapping[str, Any], send: Send) -> None:
    """Read the ``git:`` values a request names (the production handler)."""
    names = [str(name) for name in request["names"]]
    options = ResolverOptions(
        allowed_roots=tuple(spec["roots"]), max_file_bytes=int(request["max_file_bytes"])
    )
    published: set[str] = set()

    def publish(name: str, value: Value) -> None:
        published.add(name)
        send(_value_message(name, value), last=published.issuperset(names))

    try:
        read_repository(names, str(request["directory"]), options, publish)
    except Exception as exc:  # out of memory, mostly: whatever it became on its way up
        _RESERVE.clear()  # room to answer in
        limit = int(spec["memory_limit"])
        if isinstance(exc, MemoryError | SystemError):
            reason = (
                "reading the repository needs more memory than a git reader may use "
                f"({limit:,} bytes, SYSPROMPT_GIT_MEMORY_LIMIT)"
            )
        else:
            reason = f"the repository cannot be read: {type(exc).__name__}"
        for name in names:
            if name not in published:
                send(_value_message(name, Missing(reason)))
        raise _Failed from None


# Freed when a read runs out of memory, so that the worker can still say so.
_RESERVE = bytearray()
_RESERVE_BYTES = 2 * 1024 * 1024


def _value_message(name: str, value: Value) -> Message:
    if isinstance(value, Missing):
        return {"name": name, "missing": value.reason}
    return {"name": name, "value": value}


def prepare(spec: Mapping[str, Any]) -> Confinement:
    """Everything done before the first request (see the module docstring); how the
    kernel confines this process now."""
    settings = pygit2.settings
    paths = spec.get("search_paths", {})
    for name, level in _LEVELS.items():
        settings.search_path[level] = str(paths.get(name, ""))
    settings.mwindow_size = PACK_WINDOW_BYTES
    settings.mwindow_mapped_limit = max(PACK_WINDOW_BYTES, int(spec["memory_limit"]) // 4)
    _limit_memory(int(spec["memory_limit"]))
    _RESERVE.extend(bytes(_RESERVE_BYTES))
    return confine(spec["roots"], landlock=bool(spec.get("landlock", True)))


def _limit_memory(limit: int) -> None:
    if resource is None:
        return
    # Never fatal: macOS, for one, does not enforce it.
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _open_statm() -> int | None:
    """``/proc/self/statm``, opened before Landlock would refuse it (Linux)."""
    try:
        return os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


def _resident_bytes(statm: int | None) -> int:
    """Resident memory now, after giving freed heap back to the system (glibc)."""
    if _malloc_trim is not None:
        _malloc_trim(0)
    if statm is None:
        return 0
    try:
        fields = os.pread(statm, 128, 0).split()
        return int(fields[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _load_malloc_trim() -> Callable[[int], int] | None:
    if sys.platform != "linux":
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


_malloc_trim = _load_malloc_trim()


def serve(handler: Handler, stdin: BinaryIO | None = None, stdout: int | None = None) -> None:
    """Run a worker: read the spec, prepare, answer ready, then serve until the input
    ends (the parent closed it or died)."""
    source = sys.stdin.buffer if stdin is None else stdin
    out = _private_stdout() if stdout is None else stdout

    def write(message: Message) -> None:
        data = json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
        while data:
            data = data[os.write(out, data) :]

    line = source.readline()
    if not line:
        return
    spec = json.loads(line)
    statm = _open_statm()
    confinement = prepare(spec)
    refused = confinement.refusal(allow_unconfined=bool(spec.get("allow_unconfined", False)))
    start = _resident_bytes(statm)
    bound = int(spec.get("recycle_bytes") or RECYCLE_BYTES)
    write({"ready": True, **confinement.message(), "refused": refused, "pid": os.getpid()})
    while line := source.readline():
        if refused is not None:  # fails closed: reads nothing, says why
            write({"refused": refused, "done": True})
            continue
        answer = _Answer(write, lambda: _resident_bytes(statm) - start > bound)
        request = json.loads(line)
        _alarm(request.get("seconds"))
        try:
            handler(spec, request, answer.send)
        except _Failed:
            if not answer.ended:
                write({"done": True, "exit": "failed"})
            os._exit(0)  # nothing left to clean up, and no memory to do it with
        _alarm(None)
        if not answer.ended:
            answer.send({}, last=True)
        if answer.exits:
            return


def _alarm(seconds: object) -> None:
    """End this process (``SIGALRM``, whose default is to terminate, even inside libgit2)
    a second after the request's deadline: its parent kills it at the deadline, but a
    parent that died cannot. None: no alarm."""
    if not hasattr(signal, "setitimer"):
        return
    delay = float(seconds) + 1.0 if isinstance(seconds, int | float) and seconds > 0 else 0.0
    signal.setitimer(signal.ITIMER_REAL, delay)


class _Answer:
    """The answers to one request: the last one says it is done, and whether the
    worker exits after it (``grown()``: it holds too much memory)."""

    def __init__(self, write: Callable[[Message], None], grown: Callable[[], bool]) -> None:
        self.write = write
        self.grown = grown
        self.ended = False
        self.exits = False

    def send(self, message: Message, last: bool = False) -> None:
        if self.ended:
            return
        if last:
            self.ended = True
            self.exits = self.grown()
            message = {**message, "done": True, **({"exit": "grew"} if self.exits else {})}
        self.write(message)


def _private_stdout() -> int:
    """A private descriptor for the protocol; standard output goes to standard error."""
    out = os.dup(1)
    os.dup2(2, 1)
    return out


def main() -> None:
    serve(read_git)


if __name__ == "__main__":
    main()
