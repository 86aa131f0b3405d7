"""What the Python client sends for host-local values: reads a JSON list of cases
(``{"cwd", "roots", "keys"}``) on stdin and prints, as JSON, each case's
``sysprompt_client.resolve_host_values`` (``null`` for a value that does not exist)."""

from __future__ import annotations

import json
import sys

from sysprompt_client import resolve_host_values


def main() -> None:
    cases = json.load(sys.stdin)
    answers = [
        resolve_host_values(case["keys"], cwd=case["cwd"], allowed_roots=case.get("roots"))
        for case in cases
    ]
    json.dump(answers, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
