"""A worker confined exactly as the git reader is (the same ``serve``: spec, limits,
Landlock, protocol), that answers probes instead of reading repositories.

Run by the sandbox tests as ``python -P -c 'from tests.core.sandbox.probe_worker import
main; main()'`` with the checkout on ``sys.path``. A probe names an operation and a
path; the answer is the errno it failed with (0: it worked). Everything a probe uses
is imported before the worker confines itself, as the git reader's imports are.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from sysprompt_core.sandbox.worker import Send, serve

_KEPT: list[bytes] = []


def _read(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.read(fd, 1)
    finally:
        os.close(fd)


def _write(path: str) -> None:
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))


def _connect(port: str) -> None:
    with socket.create_connection(("127.0.0.1", int(port)), timeout=5):
        pass


def _udp(port: str) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        sender.sendto(b"from a reader", ("127.0.0.1", int(port)))


def _unix(path: str) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(5)
        client.connect(path)


def _socketpair(_: str) -> None:
    for end in socket.socketpair():
        end.close()


PROBES: dict[str, Callable[[str], object]] = {
    "read": _read,
    "list": os.listdir,
    "write": _write,
    "append": lambda path: os.close(os.open(path, os.O_WRONLY | os.O_APPEND)),
    "truncate": lambda path: os.truncate(path, 0),
    "mkdir": os.mkdir,
    "unlink": os.unlink,
    "rename": lambda path: os.rename(path, path + ".moved"),
    "symlink": lambda path: os.symlink("/", path),
    "execute": lambda path: subprocess.run([path], check=False),
    "connect": _connect,
    "udp": _udp,
    "unix": _unix,
    "socketpair": _socketpair,
    "signal": lambda pid: os.kill(int(pid), 0),
}


def probe(spec: Mapping[str, Any], request: Mapping[str, Any], send: Send) -> None:
    kind, argument = str(request["probe"]), str(request.get("path", ""))
    if kind == "sleep":
        send({"slept": True})
        time.sleep(float(argument))
        return
    if kind == "exit":
        os._exit(int(argument))
    if kind == "say":
        send({"text": "x" * int(argument)})
        return
    if kind in ("allocate", "keep"):
        try:
            block = b"\x01" * int(argument)  # written: resident, not just mapped
        except MemoryError:
            send({"memory_error": True})
            return
        if kind == "keep":
            _KEPT.append(block)
        send({"allocated": len(block)})
        return
    try:
        PROBES[kind](argument)
    except OSError as exc:
        send({"errno": exc.errno})
        return
    send({"errno": 0})


def main() -> None:
    delay = float(os.environ.get("PROBE_START_DELAY", "0") or 0)
    if delay:
        time.sleep(delay)
    serve(probe)


if __name__ == "__main__":
    main()
    sys.exit(0)
