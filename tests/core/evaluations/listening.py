"""A loopback listener and a file a JSON Schema check could be made to fetch (issue 31,
point 1): what a test needs to prove that nothing is."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

SECRET = "sekrit-token-4242"
DOCUMENT = {"enum": [SECRET]}
"""What the listener and the file hold: a schema that, fetched, shows :data:`SECRET` in
the reason of any answer but it."""


@dataclass
class Listener:
    """A TCP listener on loopback that records each connection and answers with a JSON
    document holding :data:`SECRET` — or, ``silent``, never answers."""

    silent: bool = False
    connections: list[bytes] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.socket.settimeout(0.1)
        self.port = self.socket.getsockname()[1]
        self.stop = threading.Event()
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/schema.json"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            connection.settimeout(5)
            self.connections.append(connection.recv(4096))
            if self.silent:
                self.held.append(connection)
                continue
            body = json.dumps(DOCUMENT).encode()
            connection.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + body)
            connection.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        for connection in self.held:
            connection.close()
        self.socket.close()


OPENED: list[str] = []
"""Every opening of a :func:`secret_file` seen in this process (by an audit hook)."""
_WATCHED: set[str] = set()


def _opened(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and args and isinstance(args[0], str | bytes | os.PathLike):
        path = os.fsdecode(args[0])
        if path in _WATCHED:
            OPENED.append(path)


sys.addaudithook(_opened)  # audit hooks stay for the process: this one only records


def secret_file(folder: Path) -> str:
    """The ``file:`` URI of a file outside every root, holding :data:`DOCUMENT`; any
    opening of it in this process is recorded in :data:`OPENED`."""
    path = folder / "outside.json"
    path.write_text(json.dumps(DOCUMENT))
    _WATCHED.add(str(path))
    return path.as_uri()


def id_trick(uri: str) -> dict[str, object]:
    """A '#' reference under an ``$id`` that sits inside an unknown keyword (so no one
    registered it): resolving it means retrieving ``uri``."""
    return {
        "$ref": "#/x-hidden",
        "x-hidden": {"properties": {"a": {"$id": uri, "$ref": "#"}}},
    }
