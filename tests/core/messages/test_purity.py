"""Message assembly is pure: the core imports no provider SDK, no HTTP client, no Django."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = ("openai", "anthropic", "agents", "httpx", "httpx2", "django", "pydantic")


def test_importing_message_assembly_imports_no_sdk() -> None:
    code = (
        "import sys, sysprompt_core.messages\n"
        f"print(sorted(m for m in {FORBIDDEN!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]", done.stderr
