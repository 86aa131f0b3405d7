"""One preview killed a gunicorn worker (issue 31, point 3), against a real server:
gunicorn (two gthread workers, DEBUG off, SQLite), a logged-in user's previews of
sixteen ``[var:…]`` values of 65,000 spaces (about 1 MB, inside every limit).

Before, tiktoken's pre-tokenizer overflowed on the run (a Rust panic,
``pyo3_runtime.PanicException``, which no ``except Exception`` catches) and each such
request ended the worker that served it: four requests, four workers, and health
checks that timed out meanwhile. Now every preview is answered with its count and the
workers are the same processes after as before.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks._support import (
    Client,
    Server,
    group_members,
    gunicorn,
    prepare,
    server_env,
    sqlite_database,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="/proc")

TEMPLATE = "".join(f"[var:v{n}]" for n in range(16)) + "end."
VARIABLES = {f"v{n}": " " * 65_000 for n in range(16)}
MODELS = [("openai", "gpt-4o"), ("openai", "gpt-4"), ("openai", "qwen3"), ("anthropic", None)]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    folder = tmp_path_factory.mktemp("tokens-server")
    project = folder / "project"
    project.mkdir()
    with contextlib.ExitStack() as stack:
        database = stack.enter_context(sqlite_database(folder))
        env = server_env(database, folder)
        token = prepare(env)
        log = folder / "gunicorn.log"
        yield stack.enter_context(gunicorn(env, token, workers=2, threads=2, log=log)), project


def workers(server: Server) -> set[int]:
    """gunicorn's workers: the processes whose parent is its master."""
    found = set()
    for pid in group_members(server.pgid):
        with contextlib.suppress(OSError):
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == server.pgid:
                found.add(pid)
    return found


def test_tokens_server_previews_of_sixteen_runs_of_spaces_leave_every_worker_alive(
    served: tuple[Server, Path],
) -> None:
    server, project = served
    before = workers(server)
    assert len(before) == 2

    answers = []
    for provider, model in MODELS * 2:
        body = {"cwd": str(project), "template": TEMPLATE, "variables": VARIABLES}
        body |= {"provider": provider} | ({"model": model} if model else {})
        with Client(server) as client:
            client.connection.timeout = 120
            code, answer = client.request("POST", "/api/system-prompt/preview", body)
            health, _ = client.request("GET", "/api/health")
        answers.append((code, health, answer.get("tokens_error"), answer["system_prompt_tokens"]))

    assert all(code == health == 200 for code, health, _, _ in answers), answers
    assert all(error is None and tokens > 8000 for _, _, error, tokens in answers), answers
    assert workers(server) == before  # no worker ended and was replaced
