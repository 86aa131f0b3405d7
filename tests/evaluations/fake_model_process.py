"""Starting :mod:`tests.evaluations.fake_model` as a process and talking to it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

SCRIPT = Path(__file__).with_name("fake_model.py")


class FakeModel:
    """The fake model server in its own process (``with FakeModel() as fake:``)."""

    def __init__(self, latency_ms: float = 0) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SCRIPT), "--latency-ms", str(latency_ms)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("PORT "), line
        self.url = f"http://127.0.0.1:{int(line.split()[1])}"

    def control(self, **settings: Any) -> None:
        httpx.post(f"{self.url}/_control", json=settings, timeout=5).raise_for_status()

    def reset(self) -> None:
        httpx.post(f"{self.url}/_reset", timeout=5).raise_for_status()

    def requests(self) -> list[dict[str, Any]]:
        answer: list[dict[str, Any]] = httpx.get(f"{self.url}/_requests", timeout=5).json()
        return answer

    def most_at_once(self) -> int:
        """The most calls that were in progress at the same moment."""
        edges = sorted(
            [(r["started"], 1) for r in self.requests()]
            + [(r["ended"], -1) for r in self.requests()]
        )
        most = current = 0
        for _, step in edges:
            current += step
            most = max(most, current)
        return most

    def connections_from_here(self) -> int:
        """How many TCP sockets this process holds open to the fake model (read from
        /proc: the process's socket descriptors, matched in the kernel's table)."""
        port = int(self.url.rsplit(":", 1)[1])
        ours = set()
        for fd in Path("/proc/self/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:  # closed since the listing
                continue
            if target.startswith("socket:["):
                ours.add(target[len("socket:[") : -1])
        held = 0
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if int(fields[2].rsplit(":", 1)[1], 16) == port and fields[9] in ours:
                    held += 1
        return held

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def __enter__(self) -> FakeModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
