"""``sysprompt-eval``: evaluate a candidate on a suite over HTTP, for a CI job
(evaluations §5) — what ``manage.py evaluate`` does, from any machine with a token.

arguments (``--url``/``SYSPROMPT_URL``, ``--token``/``SYSPROMPT_TOKEN``) →
``POST /api/evaluations`` (202; a refusal — a bad field, a release or label that does
not exist, a limit — is exit 2; the models each side is answered by, and the plan, on
stderr) → ``GET /api/evaluations/{id}`` every ``--poll``
seconds, the progress on stderr, until the run ends or ``--wait-timeout`` passes →
the summary on stdout, ``--junit FILE`` from ``GET …/results`` (every page) → exit 0 when it passes
(no regression, no error), 1 when it does not, 2 on an error (refused, unreachable,
the run failed or was cancelled, or did not end in time).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import parse_qs, urlsplit

import httpx

from sysprompt_client._base import USER_AGENT
from sysprompt_core.evaluations.report import (
    EXIT_ERROR,
    Thresholds,
    junit_xml,
    outcome,
    started_text,
    summary_text,
)

ENDED = ("finished", "failed", "cancelled")
TIMEOUT_SECONDS = 30.0
RESULTS_PAGE = 500
"""Cases per page of results read for ``--junit`` (the server's largest page)."""


class Refused(Exception):
    """The server answered an error (its message says what)."""


def side(text: str) -> object:
    """``latest``, a release number, or a label's name (``label:NAME`` also)."""
    if text == "latest":
        return "latest"
    if text.isascii() and text.isdigit():
        return int(text)
    return {"label": text.removeprefix("label:")}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sysprompt-eval",
        description="Evaluate a candidate against a baseline on a suite; "
        "exit 0 passed, 1 failed, 2 error.",
    )
    parser.add_argument("--url", default=os.environ.get("SYSPROMPT_URL"), help="$SYSPROMPT_URL")
    parser.add_argument(
        "--token", default=os.environ.get("SYSPROMPT_TOKEN"), help="$SYSPROMPT_TOKEN"
    )
    parser.add_argument(
        "--prompt",
        default=os.environ.get("SYSPROMPT_PROMPT"),
        help="the prompt whose suite runs (support/triage); $SYSPROMPT_PROMPT, else default",
    )
    parser.add_argument("--suite", required=True)
    parser.add_argument("--candidate", required=True, help="latest, a release or a label")
    parser.add_argument("--baseline", default="production", help="default: production")
    parser.add_argument("--model")
    parser.add_argument("--baseline-model")
    parser.add_argument("--candidate-model")
    parser.add_argument("--repeat", type=int)
    parser.add_argument("--fresh", action="store_true", help="bypass the response cache")
    parser.add_argument("--junit", type=Path, help="write JUnit XML here")
    parser.add_argument("--wait-timeout", type=float, default=3600.0, help="seconds")
    parser.add_argument("--poll", type=float, default=2.0, help="seconds between looks")
    return parser


def _answer(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        try:
            said: Any = response.json()
        except ValueError:
            said = response.text[:500]
        raise Refused(
            f"{response.request.method} {response.request.url.path}: {response.status_code} {said}"
        )
    return response.json()


def _results(client: httpx.Client, path: str) -> list[dict[str, Any]]:
    """Every case's result: the pages of ``path``, each at its largest, following ``next``
    (its cursor, on the client's own base URL)."""
    results: list[dict[str, Any]] = []
    params = {"page_size": str(RESULTS_PAGE)}
    while True:
        page = _answer(client.get(path, params=params))
        results.extend(page["results"])
        if not page.get("next"):
            return results
        params = {**params, "cursor": parse_qs(urlsplit(page["next"]).query)["cursor"][0]}


def _body(options: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {
        "suite": options.suite,
        "candidate": side(options.candidate),
        "baseline": side(options.baseline),
    }
    for name in ("prompt", "model", "baseline_model", "candidate_model", "repeat"):
        if getattr(options, name) is not None:
            body[name] = getattr(options, name)
    if options.fresh:
        body["fresh"] = True
    return body


def evaluate(options: argparse.Namespace, client: httpx.Client, err: TextIO, out: TextIO) -> int:
    started = _answer(client.post("/api/evaluations", json=_body(options)))
    path = f"/api/evaluations/{started['id']}"
    err.write(started_text(started, options.suite))
    deadline = time.monotonic() + options.wait_timeout
    shown: tuple[Any, ...] | None = None
    while True:
        run = _answer(client.get(path))
        now = (run["status"], run["progress"]["done"], run["progress"]["total"])
        if now != shown:
            err.write(f"{now[0]}: {now[1]}/{now[2]} calls\n")
            shown = now
        if run["status"] in ENDED or time.monotonic() >= deadline:
            break
        time.sleep(min(options.poll, max(0.0, deadline - time.monotonic())))
    if run["status"] not in ENDED:
        err.write(
            f"sysprompt-eval: evaluation {run['id']} is still {run['status']} after "
            f"{options.wait_timeout:g} s (is a worker running on the server?)\n"
        )
    thresholds = Thresholds()  # the hook for a label's gate thresholds (evaluations §4)
    out.write(summary_text(run, thresholds))
    if options.junit is not None:
        options.junit.write_bytes(junit_xml(run, _results(client, f"{path}/results")))
    return outcome(run, thresholds)


def main(argv: Sequence[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    if not options.url or not options.token:
        sys.stderr.write("sysprompt-eval: give --url and --token (or SYSPROMPT_URL, _TOKEN)\n")
        return EXIT_ERROR
    headers = {"Authorization": f"Token {options.token}", "User-Agent": USER_AGENT}
    try:
        with httpx.Client(
            base_url=options.url.rstrip("/"), headers=headers, timeout=TIMEOUT_SECONDS
        ) as client:
            return evaluate(options, client, sys.stderr, sys.stdout)
    except (Refused, httpx.HTTPError, ValueError, KeyError) as error:
        sys.stderr.write(f"sysprompt-eval: {error}\n")
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
