"""A small pool of long-lived worker processes, each confined by the kernel.

A read that runs in a thread cannot be stopped: at its deadline it can only be
abandoned, and it keeps its memory and goes on reading. A read in a worker process is
ended by killing the process, which frees everything it held at once. The pipeline of
one request (:meth:`WorkerPool.run`):

1. **Acquire** a worker for the request's :class:`WorkerSpec`, queueing at most
   ``queue_timeout`` seconds: an idle one with that spec; else start one while fewer
   than ``size`` are alive; else stop an idle one of another spec and start one in its
   place; else wait for one to come free. Still none when the queue's time is up:
   :attr:`Outcome.BUSY`, nothing sent. Waiting (for a free worker, or for one to start)
   never eats the read's own time: the read's deadline is set when the worker is in hand
   (step 2), so on a loaded machine a request that queued still gets all of ``timeout``
   to read. A worker is started once and serves request after request (no process per
   request): ``python -P -m sysprompt_core.sandbox.worker``, with a minimal environment,
   which confines itself before it answers ready (see
   :mod:`sysprompt_core.sandbox.worker`).
2. **Exchange** line-delimited JSON: send the request, collect the answers as they come
   until one says ``"done": true`` (the last answer, or an empty one). At the deadline
   (``timeout`` seconds after the worker was acquired) the worker is killed
   (``SIGKILL``) and the answers it gave so far are kept: :attr:`Outcome.TIMED_OUT`. A
   worker that dies, or answers anything but JSON objects, or more than
   ``max_message_bytes`` in one line, is killed too: :attr:`Outcome.FAILED`. Its answers
   are only ever parsed as JSON.
3. **Release**: a worker that finished goes back to the idle ones — unless it holds
   more than its spec's ``recycle_bytes`` of resident memory above what it held when it
   said it was ready (read from ``/proc/<pid>/statm`` as the read ends): a worker does
   not give back all a large read made its allocator keep, and a few such workers held
   tens of megabytes each until their next read. One that grew, was killed, or said it
   exits (it ran out of memory, or grew by its own measure) is killed and reaped, which
   frees all it held at once, and a replacement is started at once in the background,
   ready for the next request.

Per process: the workers belong to the process that started them. After ``fork``
(gunicorn starts its workers that way) the child notices that its pid changed, closes
its copies of the parent's pipes without signalling anything, and starts its own.
When the pool is garbage-collected or :meth:`WorkerPool.close` is called, its workers
are killed and reaped.
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sysprompt_core.limits import DEFAULT_GIT_RECYCLE_BYTES

__all__ = [
    "DEFAULT_COMMAND",
    "Exchange",
    "Outcome",
    "WorkerPool",
    "WorkerSpec",
    "resident_bytes",
]

DEFAULT_COMMAND: tuple[str, ...] = (sys.executable, "-P", "-m", "sysprompt_core.sandbox.worker")
"""How a worker is started: this interpreter, the worker module, no unsafe path."""

_PASSED_ENVIRONMENT = frozenset(
    {"PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONUTF8", "LANG", "SYSTEMROOT", "TZ"}
)
"""What a worker inherits of the environment (and the ``LC_*`` variables): what Python
needs to start and find its modules, no secrets of the server."""

_READ_CHUNK = 65536

Message = dict[str, Any]


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker is confined to, fixed when it starts: the real paths it may read
    beneath, its address-space limit in bytes, whether it uses Landlock, and libgit2's
    configuration search paths by level (``global``, ``xdg``; a level left out is
    searched nowhere). ``allow_unconfined``: whether it reads although the kernel does
    not confine it (no Landlock or no seccomp); else it reads nothing and says why
    (:mod:`sysprompt_core.sandbox.confinement`). ``recycle_bytes``: how much more
    resident memory than when it was ready it may hold after a read before it is
    replaced (:data:`~sysprompt_core.limits.DEFAULT_GIT_RECYCLE_BYTES`).

    ``identity`` tells the roots' directories apart from others made later at the same
    paths (device and inode of each): Landlock grants a directory, not a name, so a
    root removed and made again needs new workers."""

    roots: tuple[str, ...]
    memory_limit: int
    landlock: bool = True
    search_paths: tuple[tuple[str, str], ...] = ()
    identity: tuple[tuple[int, int], ...] = ()
    allow_unconfined: bool = False
    recycle_bytes: int = DEFAULT_GIT_RECYCLE_BYTES

    @classmethod
    def of(
        cls,
        roots: Sequence[str],
        memory_limit: int,
        landlock: bool = True,
        search_paths: Sequence[tuple[str, str]] = (),
        allow_unconfined: bool = False,
        recycle_bytes: int = DEFAULT_GIT_RECYCLE_BYTES,
    ) -> WorkerSpec:
        """A spec for ``roots`` as they are on disk now."""
        identity: list[tuple[int, int]] = []
        for root in roots:
            try:
                info = os.stat(root)
            except (OSError, ValueError):
                identity.append((-1, -1))
            else:
                identity.append((info.st_dev, info.st_ino))
        return cls(
            tuple(roots),
            memory_limit,
            landlock,
            tuple(search_paths),
            tuple(identity),
            allow_unconfined,
            recycle_bytes,
        )

    def message(self) -> Message:
        return {
            "roots": list(self.roots),
            "memory_limit": self.memory_limit,
            "landlock": self.landlock,
            "search_paths": dict(self.search_paths),
            "allow_unconfined": self.allow_unconfined,
            "recycle_bytes": self.recycle_bytes,
        }


class Outcome(enum.Enum):
    DONE = "done"
    """The worker answered in full."""
    TIMED_OUT = "timed out"
    """The deadline came first; the worker was killed."""
    BUSY = "busy"
    """No worker came free (or started) before the queue's time was up; nothing was
    sent."""
    FAILED = "failed"
    """The worker could not start, died, or answered something malformed."""


@dataclass(frozen=True)
class Exchange:
    """One request's fate: its outcome, the answers received (in order), why it failed
    (``FAILED``), and the Landlock ABI of the worker that served it (0: none)."""

    outcome: Outcome
    messages: tuple[Message, ...] = ()
    reason: str | None = None
    landlock: int = 0
    pid: int | None = None


class _Broken(Exception):
    """The worker cannot be talked to any more; the message says why."""


class _Worker:
    """One live worker process and what it said about itself."""

    def __init__(self, process: subprocess.Popen[bytes], spec: WorkerSpec) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.spec = spec
        self.landlock = 0
        self.landlock_reason: str | None = None
        self.ready_resident: int | None = None
        self._in = process.stdin.fileno()
        self._out = process.stdout.fileno()
        self._buffer = bytearray()
        self._poll = select.poll()
        self._poll.register(self._out, select.POLLIN)

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def grown(self) -> bool:
        """Whether it holds more than its spec's ``recycle_bytes`` of resident memory
        above what it held when ready (False where ``/proc`` does not tell)."""
        now = resident_bytes(self.pid)
        if now is None or self.ready_resident is None:
            return False
        return now - self.ready_resident > self.spec.recycle_bytes

    def send(self, message: Message) -> None:
        data = json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
        try:
            while data:
                data = data[os.write(self._in, data) :]
        except OSError as exc:
            raise _Broken(f"the worker stopped listening ({_exit_of(self.process)})") from exc

    def receive(self, deadline: float, limit: int) -> Message | None:
        """The next message, or None at the deadline."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return _parsed(line)
            if len(self._buffer) > limit:
                raise _Broken(f"the worker answered more than {limit:,} bytes at once")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if not self._poll.poll(max(1, int(remaining * 1000) + 1)):
                continue
            chunk = os.read(self._out, _READ_CHUNK)
            if not chunk:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=1.0)
                raise _Broken(f"the worker stopped ({_exit_of(self.process)})")
            self._buffer += chunk

    def kill(self) -> None:
        """Kill the process (its memory is freed at once) and reap it in the background."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.process.kill()
        self._close_pipes()
        threading.Thread(target=self.process.wait, name="sysprompt-reap", daemon=True).start()

    def forget(self) -> None:
        """In a forked child: close this process's copies of the pipes, signal nothing."""
        self._close_pipes()
        self.process.returncode = 0  # not ours to wait for; keeps Popen quiet

    def _close_pipes(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def _parsed(line: bytes) -> Message:
    try:
        message = json.loads(line)
    except ValueError as exc:
        raise _Broken("the worker answered something that is not JSON") from exc
    if not isinstance(message, dict):
        raise _Broken("the worker answered something that is not a JSON object")
    return message


def _exit_of(process: subprocess.Popen[bytes]) -> str:
    code = process.poll()
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def resident_bytes(pid: int) -> int | None:
    """The resident memory of process ``pid`` (``/proc/<pid>/statm``), or None."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read(128).split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _environment() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if key in _PASSED_ENVIRONMENT or key.startswith("LC_")
    }


START_SECONDS = 30.0
"""How long a worker may take to start (import, confine itself) before it is given up."""

_HANDSHAKE_BYTES = 65536


class _State:
    """The workers of one process: idle ones, busy ones, and how many are starting."""

    def __init__(self, command: tuple[str, ...]) -> None:
        self.pid = os.getpid()
        self.command = command
        self.condition = threading.Condition()
        self.idle: list[_Worker] = []
        self.busy: set[_Worker] = set()
        self.starting = 0
        self.starting_in_background: dict[WorkerSpec, int] = {}
        self.closed = False

    def alive(self) -> int:
        return len(self.idle) + len(self.busy) + self.starting

    def acquire(self, spec: WorkerSpec, size: int, deadline: float) -> _Worker | str | None:
        """A worker for ``spec`` (busy now), None when the queue's ``deadline`` came
        first, or why none started. Starting one counts as queueing: a start not ready
        by the deadline goes on in the background and serves later requests."""
        retired: list[_Worker] = []
        same: _Worker | None = None
        reserved = False
        with self.condition:
            while True:
                dead = [worker for worker in self.idle if not worker.alive()]
                for worker in dead:
                    self.idle.remove(worker)
                retired.extend(dead)
                same = next((w for w in reversed(self.idle) if w.spec == spec), None)
                if same is not None:
                    self.idle.remove(same)
                    self.busy.add(same)
                    break
                coming = self.starting_in_background.get(spec, 0) > 0  # wait for it
                if not self.closed and not coming and (self.alive() < size or self.idle):
                    if self.alive() >= size:  # an idle worker of another spec makes room
                        retired.append(self.idle.pop(0))
                    self.starting += 1
                    reserved = True
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self.condition.wait(remaining)
        for worker in retired:
            worker.kill()
        if same is not None:
            return same
        if not reserved:
            return None
        started = self._start(spec, deadline)
        if started is None:  # still starting at the deadline: it joins the idle ones later
            return self.acquire(spec, size, deadline) if time.monotonic() < deadline else None
        return started

    def _start(self, spec: WorkerSpec, deadline: float) -> _Worker | str | None:
        """Start a worker (one start is reserved); it is busy when returned. None: it did
        not say ready by the deadline and goes on starting in the background."""
        made: _Worker | str | None = None
        pending = False
        try:
            made = self._spawn(spec)
            if isinstance(made, _Worker):
                ready = self._handshake(made, deadline)
                if ready is None:
                    pending = True
                    with self.condition:  # the reserved start goes on in the background
                        self._background(spec, +1)
                        self.starting -= 1
                    threading.Thread(
                        target=self._finish_start,
                        args=(made,),
                        name="sysprompt-worker-start",
                        daemon=True,
                    ).start()
                    return None
                if isinstance(ready, str):
                    made.kill()
                    made = ready
            return made
        finally:
            if not pending:
                with self.condition:
                    self.starting -= 1
                    if isinstance(made, _Worker):
                        self.busy.add(made)
                    self.condition.notify()

    def _replace(self, spec: WorkerSpec, size: int) -> None:
        """Start a worker for ``spec`` in the background, in place of one that ended,
        so that the next request finds it ready (when there is room)."""
        with self.condition:
            if self.closed or self.alive() >= size:
                return
            self._background(spec, +1)
        threading.Thread(
            target=self._start_idle, args=(spec,), name="sysprompt-worker-start", daemon=True
        ).start()

    def _background(self, spec: WorkerSpec, change: int) -> None:
        """Count a start in the background for ``spec`` (the condition is held)."""
        self.starting += change
        left = self.starting_in_background.get(spec, 0) + change
        if left:
            self.starting_in_background[spec] = left
        else:
            self.starting_in_background.pop(spec, None)

    def _start_idle(self, spec: WorkerSpec) -> None:
        made = self._spawn(spec)
        if isinstance(made, _Worker):
            self._finish_start(made)
            return
        with self.condition:
            self._background(spec, -1)
            self.condition.notify_all()

    def _finish_start(self, worker: _Worker) -> None:
        """Wait for ``worker`` (counted as starting in the background) to say it is
        ready, then make it idle."""
        ready = self._handshake(worker, time.monotonic() + START_SECONDS)
        with self.condition:
            self._background(worker.spec, -1)
            keep = ready is True and not self.closed
            if keep:
                self.idle.append(worker)
            self.condition.notify_all()
        if not keep:
            worker.kill()

    def _spawn(self, spec: WorkerSpec) -> _Worker | str:
        try:
            process = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                close_fds=True,
                env=_environment(),
                cwd=os.path.abspath(os.sep),
            )
        except OSError as exc:
            return f"a git reader could not be started: {(exc.strerror or str(exc)).lower()}"
        worker = _Worker(process, spec)
        try:
            worker.send(spec.message())
        except _Broken as exc:
            worker.kill()
            return f"a git reader could not start: {exc}"
        return worker

    @staticmethod
    def _handshake(worker: _Worker, deadline: float) -> bool | str | None:
        """True once the worker said it is ready; None at the deadline; else why not."""
        try:
            ready = worker.receive(deadline, _HANDSHAKE_BYTES)
        except _Broken as exc:
            return f"a git reader could not start: {exc}"
        if ready is None:
            return None
        if ready.get("ready") is not True:
            return "a git reader could not start: it did not say it was ready"
        worker.landlock = int(ready.get("landlock") or 0)
        worker.ready_resident = resident_bytes(worker.pid)
        reason = ready.get("reason")
        worker.landlock_reason = reason if isinstance(reason, str) else None
        return True

    def release(self, worker: _Worker, size: int, keep: bool) -> None:
        """Back to the idle ones, or (killed, exiting, or one too many) reaped; a worker
        that ended is replaced at once, in the background."""
        with self.condition:
            self.busy.discard(worker)
            room = not self.closed and self.alive() < size
            if keep and room:
                self.idle.append(worker)
            self.condition.notify()
        if keep and room:
            return
        worker.kill()
        if not keep:
            self._replace(worker.spec, size)

    def close(self) -> None:
        """Kill every idle worker now, and each busy one when it is released."""
        with self.condition:
            self.closed = True
            idle, self.idle = self.idle, []
            self.condition.notify_all()
        if os.getpid() != self.pid:
            return
        for worker in idle:
            worker.kill()
            worker.process.wait()

    def forget(self) -> None:
        for worker in [*self.idle, *self.busy]:
            worker.forget()
        self.idle, self.busy = [], set()


class WorkerPool:
    """Worker processes for requests (see the module docstring); thread-safe.

    ``command`` starts a worker (default :data:`DEFAULT_COMMAND`); a test may give its
    own, which must speak the same protocol. A worker still starting when a request's
    queue time is up goes on starting (for at most :data:`START_SECONDS`) and serves later ones.
    """

    def __init__(self, command: Sequence[str] | None = None) -> None:
        self._command = tuple(DEFAULT_COMMAND if command is None else command)
        self._box: list[_State] = [_State(self._command)]
        self._fork_lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _close, self._box)

    def run(
        self,
        spec: WorkerSpec,
        request: Mapping[str, Any],
        *,
        size: int,
        timeout: float,
        queue_timeout: float,
        max_message_bytes: int,
    ) -> Exchange:
        """Send ``request`` to a worker for ``spec``: queue at most ``queue_timeout``
        seconds for one (a free one, or one starting), then give it ``timeout`` seconds
        to answer; at most ``size`` workers live at once."""
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        state = self._state()
        got = state.acquire(spec, size, time.monotonic() + queue_timeout)
        if got is None:
            return Exchange(Outcome.BUSY)
        if isinstance(got, str):
            return Exchange(Outcome.FAILED, reason=got)
        worker = got
        deadline = time.monotonic() + timeout  # the read's own time starts now
        messages: list[Message] = []
        keep = False
        try:
            outcome, reason = self._exchange(worker, request, deadline, max_message_bytes, messages)
            keep = outcome is Outcome.DONE and reason is None and not worker.grown()
            if reason == "exits":
                reason = None
            return Exchange(outcome, tuple(messages), reason, worker.landlock, worker.pid)
        finally:
            state.release(worker, size, keep)

    @staticmethod
    def _exchange(
        worker: _Worker,
        request: Mapping[str, Any],
        deadline: float,
        limit: int,
        messages: list[Message],
    ) -> tuple[Outcome, str | None]:
        try:
            worker.send({**request, "seconds": max(0.0, deadline - time.monotonic())})
            while True:
                message = worker.receive(deadline, limit)
                if message is None:
                    return Outcome.TIMED_OUT, None
                if message.get("done") is not True:
                    messages.append(message)
                    continue
                if len(message) > 1 + ("exit" in message):  # the last answer ends it
                    messages.append(message)
                return Outcome.DONE, "exits" if message.get("exit") else None
        except _Broken as exc:
            return Outcome.FAILED, str(exc)

    def _state(self) -> _State:
        state = self._box[0]
        if state.pid == os.getpid():
            return state
        with self._fork_lock:
            if self._box[0].pid != os.getpid():
                self._box[0].forget()
                self._box[0] = _State(self._command)
            return self._box[0]

    def pids(self) -> list[int]:
        """The pids of this process's live workers (idle and busy)."""
        state = self._state()
        with state.condition:
            return [w.pid for w in [*state.idle, *state.busy] if w.alive()]

    def close(self) -> None:
        """Kill every worker (busy ones when they finish); the pool still works after,
        starting new ones."""
        state = self._state()
        with self._fork_lock:
            self._box[0] = _State(self._command)
        state.close()


def _close(box: list[_State]) -> None:
    box[0].close()
