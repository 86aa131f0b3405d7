"""The Python client's message shapes for the same calls: reads a JSON list of calls
(``{"fn", "args", "kwargs"}``; a prompt given as ``{"__prompt__": {...}}`` becomes an
object with ``text`` and ``shared_prefix_chars``) on stdin and prints each result, or
``{"error": "<class name>"}``, as JSON."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace
from typing import Any

import sysprompt_client


def _value(item: Any) -> Any:
    if isinstance(item, dict) and "__prompt__" in item:
        return SimpleNamespace(**item["__prompt__"])
    return item


def main() -> None:
    answers: list[Any] = []
    for call in json.load(sys.stdin):
        function = getattr(sysprompt_client, call["fn"])
        args = [_value(arg) for arg in call["args"]]
        kwargs = {key: _value(value) for key, value in call.get("kwargs", {}).items()}
        try:
            answers.append(function(*args, **kwargs))
        except Exception as error:  # the class is what the test compares
            answers.append({"error": type(error).__name__})
    json.dump(answers, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
