"""scripts/test's second pass (PostgreSQL) leaves out the tests that touch no test
database: they ran in the first (tests/conftest.py's DATABASE_FREE)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SELECTION = ["tests/core/test_json.py", "tests/prompts/test_owners.py"]


def collected(second_pass: bool) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "SYSPROMPT_TESTS_DATABASE_ONLY"}
    if second_pass:
        env["SYSPROMPT_TESTS_DATABASE_ONLY"] = "1"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            *SELECTION,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return sorted({line.split("::")[0] for line in done.stdout.splitlines() if "::" in line})


@pytest.mark.parametrize(
    ("second_pass", "files"),
    [(False, SELECTION), (True, ["tests/prompts/test_owners.py"])],
)
def test_database_free_tests_run_in_the_first_pass_only(
    second_pass: bool, files: list[str]
) -> None:
    assert collected(second_pass) == files
