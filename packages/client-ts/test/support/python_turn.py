"""A first turn by the Python client: ``python_turn.py URL TOKEN CONVERSATION CWD``
prints the answer's ``sha256``, ``text`` and ``is_fallback`` as JSON (the client's
defaults: host-local values resolved on the host when the server leaves them to it)."""

from __future__ import annotations

import json
import sys

from sysprompt_client import Client


def main() -> None:
    url, token, conversation, cwd = sys.argv[1:5]
    with Client(url, token) as client:
        result = client.system_prompt(conversation, cwd=cwd)
    answer = {"sha256": result.sha256, "text": result.text, "is_fallback": result.is_fallback}
    json.dump(answer, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
