"""Evaluations §5: the client's ``sysprompt-eval`` over HTTP against a real server
process and a real ``evaluations_worker`` process (one of each for the module, on one
SQLite file), with the built-in echo model: exit 0 when the run passes, 1 on a
regression (with the JUnit file), 2 when the server refuses or the run does not end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import httpx
import pytest

from sysprompt_client import evaluate
from sysprompt_client.evaluate import main
from tests.client.served import REPO, RealServer
from tests.evaluations.fake_model_process import FakeModel
from tests.evaluations.support import models_setting

CREATE_AUTHOR = (
    "from django.contrib.auth.models import User\n"
    "from rest_framework.authtoken.models import Token\n"
    "user = User.objects.create_superuser('eval-author', '', None)\n"
    "print(Token.objects.create(user=user).key)\n"
)


class Served:
    def __init__(self, server: RealServer, token: str) -> None:
        self.server = server
        self.token = token
        self.http = httpx.Client(
            base_url=server.url, headers={"Authorization": f"Token {token}"}, timeout=30
        )

    def ok(self, method: str, path: str, body: object) -> None:
        response = self.http.request(method, path, json=body)
        assert response.status_code < 300, response.text


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("eval-command-server")
    server = RealServer(folder)
    worker = None
    served = None
    try:
        token = server.manage("shell", "-c", CREATE_AUTHOR).strip().splitlines()[-1]
        server.start()
        with open(folder / "worker.log", "ab") as log:
            worker = subprocess.Popen(
                [sys.executable, "manage.py", "evaluations_worker", "--interval", "0.1"],
                cwd=REPO,
                env=server.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its task workers in its group, killed with it
            )
        served = Served(server, token)
        # production serves release 1 ("Old rules"); latest says "New rules".
        served.ok("PUT", "/api/system-prompt", {"template": "Old rules"})
        served.ok("POST", "/api/releases", {"message": "old"})
        served.ok("PUT", "/api/labels/production", {"target": {"release": 1}})
        served.ok("PUT", "/api/system-prompt", {"template": "New rules"})
        question = [{"role": "user", "content": "q"}]
        served.ok("POST", "/api/suites", {"name": "kept"})
        served.ok(
            "POST",
            "/api/suites/kept/cases",
            {"name": "asks", "messages": question, "checks": [{"type": "contains", "value": "q"}]},
        )
        served.ok("POST", "/api/suites", {"name": "old"})
        served.ok(
            "POST",
            "/api/suites/old/cases",
            {
                "name": "old-rules",
                "messages": question,
                "checks": [{"type": "contains", "value": "first line: Old"}],
            },
        )
        yield served
    finally:
        if served is not None:
            served.http.close()
        if worker is not None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=30)
        server.close()


def run(
    served: Served, capsys: pytest.CaptureFixture[str], *arguments: str
) -> tuple[int, str, str]:
    code = main(["--url", served.server.url, "--token", served.token, "--poll", "0.1", *arguments])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_eval_exits_0_when_nothing_regresses(
    served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(served, capsys, "--suite", "kept", "--candidate", "latest")

    assert code == 0, (out, err)
    assert "PASSED" in out
    assert "finished: 2/2 calls" in err
    # No model named and none but echo configured: echo, and the output says so.
    assert "(suite kept, model echo (the default: none was named); at most 2" in err
    assert "model echo (the default: none was named)" in out


def test_eval_exits_1_and_writes_junit_when_the_candidate_regresses(
    served: Served, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    junit = tmp_path / "junit.xml"

    code, out, _ = run(
        served, capsys, "--suite", "old", "--candidate", "latest", "--junit", str(junit)
    )

    assert code == 1, out
    assert "FAILED: 1 regression(s)" in out
    [case] = ElementTree.parse(junit).getroot().iter("testcase")
    assert case.get("name") == "old-rules"
    assert case.find("failure") is not None


def test_eval_junit_holds_every_case_when_the_results_take_several_pages(
    served: Served,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(evaluate, "RESULTS_PAGE", 2)  # 5 cases: 3 pages
    served.ok("POST", "/api/suites", {"name": "paged"})
    for number in range(5):
        served.ok(
            "POST",
            "/api/suites/paged/cases",
            {
                "name": f"case-{number}",
                "messages": [{"role": "user", "content": f"q{number}"}],
                "checks": [{"type": "contains", "value": "first line: Old"}],
            },
        )
    junit = tmp_path / "junit.xml"

    code, out, _ = run(
        served, capsys, "--suite", "paged", "--candidate", "latest", "--junit", str(junit)
    )

    assert code == 1, out
    cases = [str(case.get("name")) for case in ElementTree.parse(junit).getroot().iter("testcase")]
    assert sorted(cases) == [f"case-{number}" for number in range(5)]


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (("--suite", "missing", "--candidate", "latest"), "There is no suite 'missing'"),
        (("--suite", "kept", "--candidate", "latest", "--repeat", "99"), "repeat"),
        (("--suite", "kept", "--candidate", "99"), "'candidate': ['There is no release 99"),
        (("--suite", "kept", "--candidate", "latest", "--baseline", "gone"), "baseline.label"),
    ],
)
def test_eval_exits_2_when_the_server_refuses(
    served: Served, capsys: pytest.CaptureFixture[str], arguments: tuple[str, ...], said: str
) -> None:
    code, _, err = run(served, capsys, *arguments)

    assert code == 2
    assert said in err


def test_eval_exits_2_with_a_bad_token_or_no_server(
    served: Served, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = main(
        ["--url", served.server.url, "--token", "nope", "--suite", "kept", "--candidate", "latest"]
    )
    monkeypatch.delenv("SYSPROMPT_URL", raising=False)
    unset = main(["--token", "x", "--suite", "kept", "--candidate", "latest"])

    assert (bad, unset) == (2, 2)
    assert "401" in capsys.readouterr().err


def test_eval_is_the_client_packages_console_command() -> None:
    project = tomllib.loads((REPO / "packages/client/pyproject.toml").read_text())

    assert project["project"]["scripts"]["sysprompt-eval"] == "sysprompt_client.evaluate:main"


def test_eval_naming_no_model_uses_the_servers_real_model_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeModel() as fake:
        server = RealServer(tmp_path)
        server.env["SYSPROMPT_MODELS"] = json.dumps(models_setting(fake))
        worker = None
        try:
            token = server.manage("shell", "-c", CREATE_AUTHOR).strip().splitlines()[-1]
            server.start()
            with open(tmp_path / "worker.log", "ab") as log:
                worker = subprocess.Popen(
                    [sys.executable, "manage.py", "evaluations_worker", "--interval", "0.1"],
                    cwd=REPO,
                    env=server.env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            served = Served(server, token)
            served.ok("POST", "/api/suites", {"name": "real"})
            served.ok(
                "POST",
                "/api/suites/real/cases",
                {"name": "asks", "messages": [{"role": "user", "content": "q"}]},
            )
            code, out, err = run(served, capsys, "--suite", "real", "--candidate", "latest")
            served.http.close()
        finally:
            if worker is not None:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait(timeout=30)
            server.close()
        asked = fake.requests()

    assert code == 0, (out, err)
    assert "(suite real, model fake (the default: none was named); at most 2" in err
    assert "model fake (the default: none was named)" in out
    assert len(asked) == 1  # the real model answered (both sides' prompts the same)


MAKE_TRIAGE = (
    "from django.utils import timezone\n"
    "from sysprompt.prompts.models import Prompt\n"
    "now = timezone.now()\n"
    "Prompt.objects.create(name='support/triage', created_at=now, updated_at=now)\n"
)


def test_eval_with_prompt_runs_that_prompts_suite(
    served: Served, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    served.server.manage("shell", "-c", MAKE_TRIAGE)
    in_triage = "/api/prompts/support/triage/-/suites"
    served.ok("POST", in_triage, {"name": "triage-only"})
    served.ok(
        "POST",
        f"{in_triage}/triage-only/cases",
        {
            "name": "asks",
            "messages": [{"role": "user", "content": "q"}],
            "checks": [{"type": "contains", "value": "q"}],
        },
    )

    code, out, err = run(
        served, capsys, "--prompt", "support/triage", "--suite", "triage-only",
        "--candidate", "latest", "--baseline", "latest",
    )  # fmt: skip
    monkeypatch.setenv("SYSPROMPT_PROMPT", "support/triage")
    from_env = run(
        served, capsys, "--suite", "triage-only", "--candidate", "latest", "--baseline", "latest"
    )
    monkeypatch.delenv("SYSPROMPT_PROMPT")
    in_default = run(served, capsys, "--suite", "triage-only", "--candidate", "latest")

    assert code == 0, (out, err)
    assert "PASSED" in out
    assert from_env[0] == 0, from_env
    assert in_default[0] == 2
    assert "There is no suite 'triage-only'" in in_default[2]
    runs = served.http.get("/api/evaluations", params={"prompt": "support/triage"}).json()
    assert [r["prompt"] for r in runs["results"]] == ["support/triage", "support/triage"]
