"""examples/agent_host.py runs from start to end: its own sysprompt server (stopped and
started mid-conversation) and its fake provider, which sees the same prompt every turn."""

from __future__ import annotations

import subprocess
import sys

from tests.client.served import REPO


def test_agent_host_example_runs() -> None:
    done = subprocess.run(
        [sys.executable, "examples/agent_host.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System prompt of each provider call: A A A A A B A" in done.stdout
    assert "turn 4 (sysprompt stopped)" in done.stdout
