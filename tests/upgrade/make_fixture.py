"""Make the upgrade test's fixture: a database filled by TODAY's code, what that code
answers, and every row it stored.

"Today's code" is what deployments run before named prompts: commit ``ddb9971``. Run
this script with that code (its checkout as the working directory, its virtualenv's
Python) and this repository's copy of the script::

    git worktree add --detach /tmp/upgrade-old ddb9971
    cd /tmp/upgrade-old && bash -c 'source scripts/_install && sysprompt_install dev'
    .venv/bin/python <repo>/tests/upgrade/make_fixture.py <repo>/tests/upgrade/fixture

It refuses to run on this repository's own code (the fixture must come from the old).
Pipeline, on a fresh SQLite file and the shared settings (``wire.ENVIRONMENT``: a
central deployment, so a stored ``cwd`` is a value and no folder of this machine is
read):

1. :func:`fill` — ``bootstrap`` (migrations, groups, the library's shipped defaults,
   ``production``, the admin), then everything through the old code's API, pages and
   commands, as its users would: users, agent hosts with tokens, template versions,
   fragments (variants, versions, deletions, an import, a pinned shipped default),
   releases, labels (moves, a rollback, a split, a gate, a protected one), test
   contexts, agent hosts' labels and instance overrides, conversations of both hosts
   (with and without tools, variables and overrides, a null prompt, one built before
   any template was saved, some whose owner was deleted), suites, cases, evaluation
   runs (done by the worker's own code with the ``echo`` model), webhooks with their
   events, deliveries and attempts (to a receiver in this process), logins, an admin
   change. Every table of every app then has rows (checked: a table of the old code
   nobody filled stops the script).
2. ``rows.json`` — every table's rows and sequences (``rows.py``), with the
   migrations' leaves.
3. ``answers.json`` — the requests today's clients make (:func:`exchanges`: every REST
   route's reads, a later turn of existing conversations, the Python client's
   ``system_prompt`` and its requests on the wire, ``/mcp``'s tools, the editor's
   pages; then a few writes) and what this database answered (``replay.replay``).
4. A check of the fixture: ``replay.py load`` and ``answers`` under this same old code
   on a second fresh database must answer exactly what was recorded (but for the
   volatile fields of ``compare.DIFFERENCES``).
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import import_module
from pathlib import Path
from typing import Any

UPGRADE = Path(__file__).resolve().parent
REPO = UPGRADE.parents[1]
OLD = Path.cwd().resolve()

if __name__ == "__main__":
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != UPGRADE]
    sys.path.insert(0, str(OLD))
    sys.path.append(str(REPO))

import httpx  # noqa: E402

from tests.upgrade import replay, rows, wire  # noqa: E402
from tests.upgrade.compare import differences  # noqa: E402

CWD_A = "/srv/agents/host-a"
CWD_B = "/srv/agents/host-b"
TEMPLATE_1 = (
    "You are a careful assistant.\n"
    "[fragment:core]\n"
    "[if var:team]You work for team [var:team].[endif]\n"
    "[if tool:shell]You may run shell commands.[endif]\n"
    "Working in [prompt:cwd] with [prompt:model].\n"
)
TEMPLATE_3 = (
    "You are a careful assistant.\n\n\n"
    "Keep   answers   short.\n"
    "```\n"
    "keep   this   spacing\n"
    "```\n"
    "[fragment:core]\n"
)
TEMPLATE_4 = (
    "You are a careful assistant for [prompt:conversation_id].\n"
    "[fragment:core]\n"
    "[fragment:team/notes]\n"
    "[if var:team]You work for team [var:team].[endif]\n"
    "[if tool:shell]You may run shell commands.[endif]\n"
    "[if tool:grep]Search with grep first.[endif]\n"
    "Working in [prompt:cwd] with [prompt:provider] [prompt:model].\n"
)


def main(argv: list[str]) -> None:
    out = Path(argv[0]).resolve()
    old_code_check()
    folder = Path(tempfile.mkdtemp(prefix="sysprompt-upgrade-fixture-"))
    env = wire.environment(os.environ, f"sqlite:///{folder / 'old.sqlite3'}")
    os.environ.clear()
    os.environ.update(env)
    import django

    django.setup()
    try:
        api = fill()
        out.mkdir(parents=True, exist_ok=True)
        dumped = dump()
        tables_filled_check(dumped)
        (out / "rows.json").write_text(lines(dumped))
        recorded = record(api)
        (out / "answers.json").write_text(lines(recorded))
        fixture_check(out, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"fixture written to {out}")


def lines(data: dict[str, Any]) -> str:
    """``data`` as JSON with each item of its lists and tables on a line of its own (a
    regenerated fixture's diff shows what changed, and the files stay small). Keys keep
    their order: a JSON field's text on SQLite is as it was stored."""

    def compact(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def block(value: Any, indent: str) -> str:
        inner = indent + " "
        if isinstance(value, list) and value:
            return "[\n" + ",\n".join(inner + compact(item) for item in value) + f"\n{indent}]"
        if isinstance(value, dict) and value:
            items = [f"{inner}{compact(key)}: {block(item, inner)}" for key, item in value.items()]
            return "{\n" + ",\n".join(items) + f"\n{indent}}}"
        return compact(value)

    return block(data, "") + "\n"


def old_code_check() -> None:
    """Stop unless the app imported is another checkout's (the old code's)."""
    here = Path(import_module("sysprompt").__file__ or "").resolve()
    if REPO in here.parents:
        raise SystemExit(
            f"sysprompt is imported from {here}: run this from the OLD code's checkout "
            "(see this script's docstring)."
        )


def commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=OLD, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


# --- 1. Filling the database --------------------------------------------------------


class Api:
    """The app in this process, over WSGI; one token per actor, one session cookie."""

    def __init__(self, app: Any = None) -> None:
        from django.core.wsgi import get_wsgi_application

        self.app = app or get_wsgi_application()
        self.http = httpx.Client(
            transport=httpx.WSGITransport(app=self.app), base_url=wire.BASE_URL
        )
        self.tokens: dict[str, str] = {}

    def call(
        self,
        actor: str | None,
        method: str,
        path: str,
        body: Any = None,
        *,
        expect: int | tuple[int, ...] = (200, 201, 202, 204),
        **options: Any,
    ) -> Any:
        """The answer's JSON (the whole answer when it has none), once its status is one
        of ``expect``."""
        exchange = wire.Exchange(path, method, path, actor, body=body, **options)
        answer = wire.send(self.http, exchange, self.tokens)
        wanted = (expect,) if isinstance(expect, int) else expect
        assert answer["status"] in wanted, (method, path, answer)
        return answer.get("json", answer)

    def etag(self, actor: str, path: str) -> str:
        answer = wire.send(self.http, wire.Exchange(path, "GET", path, actor), self.tokens)
        tag: str = answer["headers"]["etag"]
        return tag


@contextmanager
def receiver() -> Iterator[str]:
    """A webhook receiver on 127.0.0.1: ``/ok`` answers 200, anything else 500. Its
    base URL."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status = 200 if self.path == "/ok" else 500
            answer = b"thanks" if status == 200 else b"broken"
            self.send_response(status)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def fill() -> Api:
    """Everything today's users do, in a plausible order; what :func:`record` needs."""
    from django.core.management import call_command

    call_command("bootstrap", verbosity=0, stdout=io.StringIO())
    api = Api()
    users(api)
    with receiver() as url:
        webhooks(api, url)
        before_any_template(api)
        templates(api)
        library(api)
        releases_and_labels(api)
        hosts(api)
        conversations(api)
        evaluations(api)
        test_contexts(api)
        owner_deleted(api)
        pages(api)
        api.call("admin", "POST", "/api/webhooks/1/test", expect=202)
        deliveries()
    axes_unused_tables()
    return api


def users(api: Api) -> None:
    """An admin (bootstrap's), an author, a publisher, a user with one permission of
    its own, three agent hosts with tokens (``create_agent_host``)."""
    from django.contrib.auth.models import Group, Permission, User
    from django.core.management import call_command

    def token_of(username: str) -> str:
        printed = io.StringIO()
        call_command("drf_create_token", username, stdout=printed)
        return printed.getvalue().split()[2]

    authors = Group.objects.get(name="Prompt authors")
    publishers = Group.objects.get(name="Prompt publishers")
    author = User.objects.create_user("author", "author@example.com", "author-password")
    author.groups.add(authors)
    publisher = User.objects.create_user("publisher", password="publisher-password")
    publisher.groups.add(authors, publishers)
    viewer = User.objects.create_user("viewer", password=None)
    viewer.user_permissions.add(Permission.objects.get(codename="view_conversationprompt"))
    for username in ("admin", "author", "publisher", "viewer"):
        api.tokens[username] = token_of(username)
    for host in ("host-a", "host-b", "host-gone"):
        printed = io.StringIO()
        call_command("create_agent_host", host, stdout=printed)
        api.tokens[host] = printed.getvalue().strip().splitlines()[-1]


def webhooks(api: Api, url: str) -> None:
    """Three subscriptions: every event with text (answers 200), labels and releases
    (answers 500: failed attempts, retries pending), and an inactive one."""
    everything = [
        "release.created",
        "label.moved",
        "template.saved",
        "fragment.saved",
        "host.changed",
        "library.imported",
        "evaluation.finished",
    ]
    api.call(
        "admin",
        "POST",
        "/api/webhooks",
        {"url": f"{url}/ok", "events": everything, "include_text": True},
    )
    api.call(
        "admin",
        "POST",
        "/api/webhooks",
        {"url": f"{url}/broken", "events": ["label.moved", "release.created"]},
    )
    api.call(
        "admin",
        "POST",
        "/api/webhooks",
        {"url": f"{url}/ok", "events": everything, "active": False},
    )


def before_any_template(api: Api) -> None:
    """A conversation built from the built-in default template, and release 1, before
    anyone saved a template."""
    api.call(
        "host-a",
        "POST",
        "/api/conversations/a-builtin/system-prompt/resolve",
        {"cwd": CWD_A, "model": "gpt-4o", "provider": "openai"},
    )
    api.call("author", "POST", "/api/releases", {"message": "Before any template"})


def templates(api: Api) -> None:
    """Versions 1–4: with If-Match, an empty one (conversations built then store a null
    prompt), a compressed one; conversations on each."""
    assert api.call("author", "GET", "/api/system-prompt")["version"] == 0
    current = api.etag("author", "/api/system-prompt")
    api.call(
        "author",
        "PUT",
        "/api/system-prompt",
        {"template": TEMPLATE_1},
        headers={"If-Match": current},
    )
    api.call(
        "host-a",
        "POST",
        "/api/conversations/a-v1/system-prompt/resolve",
        {
            "cwd": CWD_A,
            "model": "gpt-4o",
            "provider": "openai",
            "tools": ["shell"],
            "variables": {"team": "infra"},
        },
    )
    api.call("admin", "PUT", "/api/system-prompt", {"template": ""})
    api.call(
        "host-a",
        "POST",
        "/api/conversations/a-empty/system-prompt/resolve",
        {"cwd": CWD_A, "label": "latest"},
    )
    api.call("author", "PUT", "/api/system-prompt", {"template": TEMPLATE_3, "compress": True})
    api.call(
        "host-b",
        "POST",
        "/api/conversations/b-compressed/system-prompt/resolve",
        {"cwd": CWD_B, "model": "claude-sonnet-4-5", "provider": "anthropic"},
    )
    api.call("author", "PUT", "/api/system-prompt", {"template": TEMPLATE_4, "compress": False})


def library(api: Api) -> None:
    """Fragments: an edit of a shipped default (then pinned: "Keep mine"), a fragment with
    a variant per provider and per model and several versions, a deleted variant and a
    deleted fragment, a preset with defaults, a compressed variant, an import."""
    fragment = "/api/library/fragments"
    api.call("author", "PUT", f"{fragment}/core", {"text": "Be precise. Cite files.\n"})
    api.call("author", "PUT", f"{fragment}/team/notes", {"text": "Notes v1.\n"})
    api.call("author", "PUT", f"{fragment}/team/notes", {"text": "Notes v2 for [var:team].\n"})
    api.call(
        "author",
        "PUT",
        f"{fragment}/team/notes?provider=anthropic",
        {"text": "Notes for Claude.\n", "compress": True},
    )
    api.call(
        "author",
        "PUT",
        f"{fragment}/team/notes?provider=openai&model=gpt-5",
        {"text": "Notes for GPT-5.\n"},
    )
    api.call(
        "author", "PUT", f"{fragment}/team/notes?provider=openai", {"text": "Notes for OpenAI.\n"}
    )
    api.call("author", "DELETE", f"{fragment}/team/notes?provider=openai")
    api.call("author", "PUT", f"{fragment}/team/old", {"text": "Soon gone.\n"})
    api.call("author", "DELETE", f"{fragment}/team/old")
    api.call(
        "author",
        "PUT",
        f"{fragment}/persona",
        {
            "text": "You speak as [var:who].\n",
            "defaults": {"who": "a helpful colleague"},
            "strategy": "prepend",
        },
    )
    api.call(
        "author",
        "PUT",
        f"{fragment}/persona?provider=anthropic",
        {"text": "As [var:who], you answer Claude-style.\n"},
    )
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("imported/tips.md", "Tip: read the README first.\n")
        bundle.writestr("providers/anthropic/imported/tips.md", "Tip for Claude.\n")
    api.call(
        "author",
        "POST",
        "/api/library/import",
        raw=base64.b64encode(archive.getvalue()).decode(),
        headers={"Content-Type": "application/zip"},
    )


def releases_and_labels(api: Api) -> None:
    """Releases 2 and 3; production moved (by a publisher), rolled back and moved again;
    staging following latest then a release; a split canary; a protected beta; a label
    with a gate."""
    api.call("author", "POST", "/api/releases", {"message": "Template 4 with team notes"})
    api.call(
        "author", "PUT", "/api/system-prompt", {"template": TEMPLATE_4 + "Answer in English.\n"}
    )
    api.call("author", "PUT", "/api/library/fragments/team/notes", {"text": "Notes v3.\n"})
    api.call("author", "POST", "/api/releases", {"message": "English"})
    labels = "/api/labels"
    api.call(
        "publisher", "PUT", f"{labels}/production", {"target": {"release": 2}, "message": "Ship 2"}
    )
    api.call(
        "publisher", "PUT", f"{labels}/production", {"target": {"release": 3}, "message": "Ship 3"}
    )
    api.call("publisher", "POST", f"{labels}/production/rollback", {"message": "Back to 2"})
    api.call("author", "PUT", f"{labels}/staging", {"target": "latest"})
    api.call("author", "PUT", f"{labels}/staging", {"target": {"release": 3}, "message": "Freeze"})
    api.call(
        "author",
        "PUT",
        f"{labels}/canary",
        {
            "target": {"split": [{"release": 2, "weight": 5000}, {"release": 3, "weight": 5000}]},
            "message": "Half and half",
        },
    )
    api.call(
        "author",
        "PUT",
        f"{labels}/beta",
        {"target": {"release": 1}, "protected": True, "message": "Pinned"},
    )


def hosts(api: Api) -> None:
    """host-a on canary with an instance override of text; host-b on staging with a
    preset; host-gone with neither (the admin deletes it later, which it refuses for a
    user whose override or label it may not delete)."""
    hosts = "/api/agent-hosts"
    api.call("author", "PUT", f"{hosts}/host-a/label", {"label": "canary"}, expect=403)
    api.call("publisher", "PUT", f"{hosts}/host-a/label", {"label": "canary"})
    api.call(
        "publisher",
        "PUT",
        f"{hosts}/host-a/override",
        {"override": {"content": "Host A: log every command.", "strategy": "append"}},
    )
    api.call("publisher", "PUT", f"{hosts}/host-b/label", {"label": "staging"})
    api.call(
        "publisher",
        "PUT",
        f"{hosts}/host-b/override",
        {"override": {"preset": "persona", "variables": {"who": "a reviewer"}}},
    )


def conversation(
    api: Api, actor: str, conversation_id: str, turn: str = "resolve", **body: Any
) -> Any:
    return api.call(
        actor, "POST", f"/api/conversations/{conversation_id}/system-prompt/{turn}", body
    )


def conversations(api: Api) -> None:
    """Both hosts' conversations: with tools, variables, thread overrides (text and
    preset), labels named in the call, a construct and a compaction, later turns."""
    conversation(
        api,
        "host-a",
        "a-1",
        cwd=CWD_A,
        model="gpt-4o",
        provider="openai",
        tools=["shell", "grep"],
        variables={"team": "infra"},
        override={"content": "Thread: be terse.", "strategy": "prepend"},
    )
    conversation(api, "host-a", "a-1", cwd=CWD_A, model="gpt-4o", provider="openai")
    conversation(api, "host-a", "a-2", cwd=CWD_A, model="gpt-5", provider="openai")
    conversation(
        api,
        "host-a",
        "a-3",
        cwd=CWD_A,
        model="claude-opus-4",
        provider="anthropic",
        override={"preset": "persona", "variables": {"who": "a pirate"}},
    )
    conversation(api, "host-a", "a-latest", cwd=CWD_A, label="latest", tools=["shell"])
    conversation(api, "host-a", "a-constructed", cwd=CWD_A, model="gpt-4o")
    conversation(
        api,
        "host-a",
        "a-constructed",
        "construct",
        cwd=CWD_A,
        model="gpt-4o",
        provider="openai",
        variables={"team": "payments"},
    )
    conversation(api, "host-a", "a-compacted", cwd=CWD_A)
    conversation(api, "host-a", "a-compacted", "compact", cwd=CWD_A, tools=["grep"])
    conversation(
        api,
        "host-b",
        "b-1",
        cwd=CWD_B,
        model="claude-sonnet-4-5",
        provider="anthropic",
        tools=["shell"],
        variables={"team": "support"},
    )
    conversation(api, "host-b", "b-2", cwd=CWD_B, label="production")
    conversation(api, "host-b", "b-forgotten", cwd=CWD_B)
    api.call("host-b", "DELETE", "/api/conversations/b-forgotten/system-prompt", expect=204)
    conversation(api, "author", "author-1", cwd="/srv/agents/author", model="gpt-4o")
    conversation(
        api,
        "host-gone",
        "gone-1",
        cwd="/srv/agents/gone",
        model="gpt-4o",
        provider="openai",
        tools=["shell"],
    )
    conversation(api, "host-gone", "gone-2", cwd="/srv/agents/gone", label="beta")


def evaluations(api: Api) -> None:
    """Two suites with cases (inline contexts, a test context, one from a recorded
    conversation, an import), a deleted case; runs done by the worker's code with the
    echo model (the second served partly from the cache), one cancelled; then a gate on
    a label that names the suite."""
    api.call(
        "author",
        "POST",
        "/api/test-contexts",
        {
            "name": "ctx-openai",
            "values": {"prompt:cwd": "/srv/ctx"},
            "provider": "openai",
            "model": "gpt-4o",
            "tools": ["shell"],
            "variables": {"team": "infra"},
        },
    )
    suites = "/api/suites"
    api.call("author", "POST", suites, {"name": "smoke", "description": "The basics"})
    cases = f"{suites}/smoke/cases"
    api.call(
        "author",
        "POST",
        cases,
        {
            "name": "greets",
            "messages": [{"role": "user", "content": "Hello"}],
            "checks": [{"type": "contains", "value": "Hello", "ignore_case": True}],
            "reference": "Hello to you.",
        },
    )
    api.call(
        "author",
        "POST",
        cases,
        {
            "name": "json-answer",
            "context": {"test_context": "ctx-openai"},
            "messages": [{"role": "user", "content": "Answer in JSON"}],
            "checks": [
                {"type": "regex", "pattern": "sha256"},
                {"type": "max_chars", "value": 5000},
            ],
        },
    )
    api.call(
        "author",
        "POST",
        cases,
        {
            "from_conversation": "a-1",
            "name": "from-a-1",
            "messages": [{"role": "user", "content": "Run the tests"}],
            "values": {"git:branch": "main"},
            "checks": [{"type": "not_contains", "value": "ERROR"}],
        },
    )
    api.call(
        "author", "POST", cases, {"name": "dropped", "messages": [{"role": "user", "content": "x"}]}
    )
    api.call("author", "DELETE", f"{cases}/dropped", expect=204)
    api.call("author", "POST", suites, {"name": "regressions"})
    lines = [
        {
            "name": "tool-use",
            "messages": [{"role": "user", "content": "List files"}],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "ls",
                        "description": "List files",
                        "parameters": {"type": "object", "properties": {}},
                    },
                }
            ],
            "checks": [{"type": "starts_with", "value": "sha256"}],
        },
        {
            "name": "schema",
            "context": {"cwd": "/srv/ctx", "provider": "anthropic"},
            "messages": [
                {"role": "user", "content": "Q"},
                {"role": "assistant", "content": "A"},
                {"role": "user", "content": "Again"},
            ],
            "checks": [{"type": "json_schema", "schema": {"type": "object"}}],
        },
    ]
    api.call(
        "author",
        "POST",
        f"{suites}/regressions/import",
        raw=base64.b64encode("\n".join(json.dumps(line) for line in lines).encode()).decode(),
        headers={"Content-Type": "application/x-ndjson"},
    )
    run_execute = import_module("sysprompt.evaluations.execution").run_execute
    first = api.call(
        "author",
        "POST",
        "/api/evaluations",
        {"suite": "smoke", "candidate": "latest", "model": "echo"},
    )
    assert run_execute(first["id"]) == "finished"
    second = api.call(
        "author",
        "POST",
        "/api/evaluations",
        {
            "suite": "smoke",
            "candidate": {"release": 3},
            "baseline": {"label": "staging"},
            "model": "echo",
            "repeat": 2,
        },
    )
    assert run_execute(second["id"]) == "finished"
    third = api.call(
        "author",
        "POST",
        "/api/evaluations",
        {"suite": "regressions", "candidate": "latest", "baseline": 2, "model": "echo"},
    )
    assert run_execute(third["id"]) == "finished"
    cancelled = api.call(
        "author",
        "POST",
        "/api/evaluations",
        {"suite": "regressions", "candidate": 3, "model": "echo"},
    )
    api.call("author", "POST", f"/api/evaluations/{cancelled['id']}/cancel")
    api.call(
        "author",
        "PUT",
        "/api/labels/gated",
        {
            "target": {"release": 2},
            "message": "Gated from the start",
            "gate": {"suite": "smoke", "max_regressions": 0, "min_pass_rate": 0.5},
        },
    )


def test_contexts(api: Api) -> None:
    """Test contexts beside the one the suites use: with a cwd and an override, and one
    created then deleted."""
    contexts = "/api/test-contexts"
    api.call(
        "author",
        "POST",
        contexts,
        {
            "name": "ctx-anthropic",
            "cwd": "/srv/ctx/anthropic",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "override": {"preset": "persona"},
        },
    )
    api.call("author", "PUT", f"{contexts}/ctx-gone", {"cwd": "/srv/ctx/gone"})
    api.call("author", "DELETE", f"{contexts}/ctx-gone", expect=204)


def owner_deleted(api: Api) -> None:
    """host-gone's user deleted in the admin (a log entry): its conversations stay,
    without an owner — as rows stored before conversations had owners."""
    from django.contrib.auth.models import User

    host = User.objects.get(username="host-gone")
    login(api, "admin", wire.ADMIN_PASSWORD)
    api.call(
        "session", "POST", f"/admin/auth/user/{host.pk}/delete/", form={"post": "yes"}, expect=302
    )
    api.call("session", "POST", "/admin/auth/group/add/", form={"name": "Reviewers"}, expect=302)
    del api.tokens["host-gone"]


def login(api: Api, username: str, password: str) -> None:
    api.call(None, "GET", "/accounts/login/", expect=200, page=True)
    api.call(
        None,
        "POST",
        "/accounts/login/",
        form={"username": username, "password": password},
        expect=302,
    )


def pages(api: Api) -> None:
    """A failed login (django-axes' records), the editor's remembered working directory,
    a pinned shipped default ("Keep mine")."""
    anonymous = Api(api.app)
    try:
        anonymous.call(None, "GET", "/accounts/login/", page=True)
        anonymous.call(
            None,
            "POST",
            "/accounts/login/",
            form={"username": "author", "password": "wrong"},
            expect=200,
        )
    finally:
        anonymous.http.close()
    api.call("session", "POST", "/editor/cwd", form={"cwd": "/srv/agents/admin"})
    api.call("session", "POST", "/library/core/-/keep-mine", form={}, expect=(200, 302))


def deliveries() -> None:
    """The events' worker (its own rounds, as ``events_worker`` runs them) until every
    delivery was tried: attempts that succeeded, failed ones with retries pending."""
    worker_class = import_module("sysprompt.events.worker").BatchWorker
    worker = worker_class(
        queue_names=["*"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="fixture",
        excluded_queue_names=[],
    )
    try:
        while worker.round():
            worker.lanes.drain()
    finally:
        worker.lanes.close()


def axes_unused_tables() -> None:
    """django-axes' failure log and attempts' expirations: tables the app's settings
    never write (AXES_ENABLE_ACCESS_FAILURE_LOG and AXES_USE_ATTEMPT_EXPIRATION are
    off), given a row each through axes' own models so that every table has rows."""
    axes = import_module("axes.models")
    attempt = axes.AccessAttempt.objects.get()
    axes.AccessAttemptExpiration.objects.create(
        access_attempt=attempt, expires_at=attempt.attempt_time + timedelta(minutes=15)
    )
    axes.AccessFailureLog.objects.create(
        username="author",
        ip_address="127.0.0.1",
        user_agent="python-httpx",
        http_accept="*/*",
        path_info="/accounts/login/",
        locked_out=False,
    )


# --- 2. The rows -------------------------------------------------------------------


def dump() -> dict[str, Any]:
    """Every table's rows, the sequences, the migrations' leaves and the commit."""
    from django.apps import apps
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    leaves = sorted(MigrationLoader(connection).graph.leaf_nodes())
    return {"commit": commit(), "leaves": leaves, **rows.rows_dump(apps, connection)}


def tables_filled_check(dumped: dict[str, Any]) -> None:
    """Stop when a table of the old code has no row: the fixture must hold them all."""
    empty = [table for table, content in dumped["tables"].items() if not content["rows"]]
    if empty:
        raise SystemExit(f"tables without rows: {', '.join(empty)}; fill them in fill()")


# --- 3. The answers ------------------------------------------------------------------


class Recorder:
    """Sends each exchange as the replay will (a client with no cookies yet, the app in
    this process) and keeps it with its answer."""

    def __init__(self, api: Api) -> None:
        self.app = api.app
        self.tokens = dict(api.tokens)
        self.http = httpx.Client(
            transport=httpx.WSGITransport(app=self.app), base_url=wire.BASE_URL
        )
        self.exchanges: list[dict[str, Any]] = []
        self.answers: list[dict[str, Any]] = []
        self.names: set[str] = set()
        self.start = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=1)
        self.clock: Callable[[str], None] = lambda at: None

    def instant(self) -> str:
        """One second later than the exchange before (the first: a minute after now)."""
        return (self.start + timedelta(seconds=len(self.exchanges))).isoformat()

    def send(self, exchange: wire.Exchange, expect: int | None = None) -> dict[str, Any]:
        assert exchange.name not in self.names, exchange.name
        exchange = dataclasses.replace(exchange, at=self.instant())
        self.clock(exchange.at)
        if exchange.method == "CLIENT":
            answer, sent = self.client(exchange)
        else:
            answer, sent = wire.send(self.http, exchange, self.tokens), []
        if expect is not None:
            assert answer["status"] == expect, (exchange, answer)
        for each, got in [(exchange, answer), *sent]:
            self.names.add(each.name)
            self.exchanges.append(each.as_json())
            self.answers.append({"name": each.name, "answer": got})
        return answer

    def client(
        self, exchange: wire.Exchange
    ) -> tuple[dict[str, Any], list[tuple[wire.Exchange, dict[str, Any]]]]:
        """The Python client's call, and each request it made on the wire (kept after it,
        as plain requests the replay sends again)."""
        recording = wire.Recording(
            httpx.WSGITransport(app=self.app),
            exchange.actor or "",
            f"{exchange.name} wire",
            exchange.at,
        )
        answer = replay.client_call(self.app, exchange, self.tokens, transport=recording)
        return answer, recording.exchanges

    def get(self, name: str, path: str, actor: str | None = "author", **options: Any) -> Any:
        return self.send(wire.Exchange(name, "GET", path, actor, **options))

    def post(self, name: str, path: str, body: Any, actor: str = "author", **options: Any) -> Any:
        return self.send(wire.Exchange(name, "POST", path, actor, body=body, **options))


def record(api: Api) -> dict[str, Any]:
    """Every request of :func:`exchanges`, answered by the filled database."""
    recorder = Recorder(api)
    replay.warm_up()
    try:
        with wire.stopped_clock() as recorder.clock:
            exchanges(recorder)
    finally:
        recorder.http.close()
    return {
        "commit": commit(),
        "actors": recorder.tokens,
        "exchanges": recorder.exchanges,
        "answers": recorder.answers,
    }


def exchanges(rec: Recorder) -> None:
    template_reads(rec)
    conversation_reads(rec)
    library_reads(rec)
    release_reads(rec)
    evaluation_reads(rec)
    event_reads(rec)
    client_and_mcp(rec)
    editor_pages(rec)
    writes(rec)


def template_reads(rec: Recorder) -> None:
    got = rec.get("get_template", "/api/system-prompt")
    rec.get("get_template as a host", "/api/system-prompt", "host-a")
    rec.get("list_template_variables", "/api/system-prompt/variables", "host-b")
    page = rec.get("list_template_versions", "/api/system-prompt/versions?page_size=2")
    rec.get("list_template_versions, next page", page["json"]["next"])
    rec.get("list_template_versions, all", "/api/system-prompt/versions")
    refs = rec.get("list_template_references", "/api/system-prompt/references", "host-a")
    rec.get(
        "list_template_references, not modified",
        "/api/system-prompt/references",
        "host-a",
        headers={"If-None-Match": refs["headers"]["etag"]},
    )
    rec.get(
        "list_template_references for a label and model",
        "/api/system-prompt/references?label=canary&provider=anthropic&model=claude-x",
        "host-b",
    )
    rec.post(
        "preview_template",
        "/api/system-prompt/preview",
        {
            "cwd": CWD_A,
            "model": "gpt-4o",
            "provider": "openai",
            "tools": ["shell"],
            "variables": {"team": "infra"},
            "conversation_id": "preview-1",
        },
    )
    rec.post(
        "preview_template, a text",
        "/api/system-prompt/preview",
        {"cwd": CWD_A, "template": "[fragment:persona] in [prompt:cwd]"},
        "host-a",
    )
    assert got["status"] == 200


CONVERSATIONS = (
    ("host-a", "a-builtin"),
    ("host-a", "a-v1"),
    ("host-a", "a-empty"),
    ("host-b", "b-compressed"),
    ("host-a", "a-1"),
    ("host-a", "a-2"),
    ("host-a", "a-3"),
    ("host-a", "a-latest"),
    ("host-a", "a-constructed"),
    ("host-a", "a-compacted"),
    ("host-b", "b-1"),
    ("host-b", "b-2"),
    ("author", "author-1"),
    (None, "gone-1"),
    (None, "gone-2"),
)
"""Every stored conversation and its owner (``None``: deleted, as before owners)."""


def conversation_reads(rec: Recorder) -> None:
    """Each conversation read by its owner and by an author; a later turn of each by its
    owner (or an author) with the context it was built for; 304s, 404s, mismatches."""
    rec.get("list_conversations", "/api/conversations")
    rec.get("list_conversations as host-a", "/api/conversations", "host-a")
    rec.get("list_conversations as host-b, a page", "/api/conversations?page_size=1", "host-b")
    rec.get("list_conversations as viewer", "/api/conversations", "viewer")
    for owner, conversation_id in CONVERSATIONS:
        path = f"/api/conversations/{conversation_id}/system-prompt"
        got = rec.get(f"get_conversation_prompt {conversation_id}", path)
        stored = got["json"]
        reader = owner or "author"
        if owner not in (None, "author"):
            rec.get(f"get_conversation_prompt {conversation_id} by its owner", path, owner)
        rec.get(
            f"get_conversation_prompt {conversation_id}, not modified",
            path,
            reader,
            headers={"If-None-Match": got["headers"]["etag"]},
        )
        context = {key: stored[key] for key in ("cwd", "model", "provider") if stored[key]}
        turn = rec.post(
            f"resolve {conversation_id}, a later turn", f"{path}/resolve", context, reader
        )
        assert turn["status"] == 200, turn
        assert turn["json"]["system_prompt"] == stored["system_prompt"]
    other = "/api/conversations/a-1/system-prompt"
    rec.get("get_conversation_prompt of another host", other, "host-b")
    rec.post("resolve of another host", f"{other}/resolve", {"cwd": CWD_B}, "host-b")
    rec.post(
        "resolve a-1 from elsewhere",
        f"{other}/resolve",
        {"cwd": "/srv/elsewhere", "model": "gpt-5", "provider": "anthropic"},
        "host-a",
    )
    rec.post(
        "resolve a-1 with a call override",
        f"{other}/resolve",
        {"cwd": CWD_A, "call_override": {"content": "Only this call.", "strategy": "append"}},
        "host-a",
    )
    rec.post(
        "resolve a-3 with a preset call override",
        "/api/conversations/a-3/system-prompt/resolve",
        {"cwd": CWD_A, "call_override": {"preset": "persona"}},
        "host-a",
    )
    rec.get("get_conversation_prompt, unknown", "/api/conversations/nobody/system-prompt")
    rec.get(
        "get_conversation_prompt, forgotten",
        "/api/conversations/b-forgotten/system-prompt",
        "host-b",
    )
    rec.get("get_conversation_prompt, a bad id", "/api/conversations/bad%20id/system-prompt")
    rec.get("get_conversation_prompt without a token", other, None)


def library_reads(rec: Recorder) -> None:
    """The library: the list, every variant and its versions, previews, the export, a
    dry run of importing it back."""
    listed = rec.get("list_library", "/api/library")
    rec.get("list_library as a host", "/api/library?page_size=3", "host-a")
    fragments = "/api/library/fragments"
    for item in listed["json"]["results"]:
        for variant in item["variants"]:
            query = variant_query(variant)
            label = f"{item['name']}{query}"
            rec.get(f"get_fragment_variant {label}", f"{fragments}/{item['name']}{query}")
            rec.get(
                f"list_fragment_versions {label}", f"{fragments}/{item['name']}/versions{query}"
            )
    rec.get("get_fragment_variant, exact", f"{fragments}/team/notes/-")
    rec.get("get_fragment_variant, unknown", f"{fragments}/team/nothing")
    rec.post(
        "preview_library, a fragment",
        "/api/library/preview",
        {"cwd": CWD_A, "fragment": "team/notes", "provider": "openai", "model": "gpt-5"},
    )
    rec.post(
        "preview_library, a template",
        "/api/library/preview",
        {
            "cwd": CWD_A,
            "template": "[fragment:imported/tips]",
            "provider": "anthropic",
            "compress": True,
        },
    )
    rec.post(
        "preview_library, the template",
        "/api/library/preview",
        {
            "cwd": CWD_B,
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "override": {"preset": "persona"},
        },
    )
    exported = rec.get("export_library", "/api/library/export")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as bundle:
        for name, text in exported["zip"].items():
            bundle.writestr(name, text)
    rec.send(
        wire.Exchange(
            "import_library, a dry run of the export",
            "POST",
            "/api/library/import?dry_run=1",
            "author",
            raw=base64.b64encode(archive.getvalue()).decode(),
            headers={"Content-Type": "application/zip"},
        )
    )
    rec.get("get_agent_host_override host-a", "/api/agent-hosts/host-a/override", "publisher")
    rec.get("get_agent_host_override host-b", "/api/agent-hosts/host-b/override")
    rec.get("get_agent_host_override, by the host", "/api/agent-hosts/host-b/override", "host-b")


def variant_query(variant: dict[str, Any]) -> str:
    parts = [f"{key}={variant[key]}" for key in ("provider", "model") if variant.get(key)]
    return f"?{'&'.join(parts)}" if parts else ""


def release_reads(rec: Recorder) -> None:
    rec.get("list_releases", "/api/releases")
    for number in (1, 2, 3):
        rec.get(f"get_release {number}", f"/api/releases/{number}")
    rec.get("compare_release 1 with latest", "/api/releases/1/compare")
    rec.get("compare_release 2 with 3", "/api/releases/2/compare?with=3")
    rec.get("get_release, unknown", "/api/releases/9")
    rec.post(
        "release_impact",
        "/api/releases/impact",
        {"label": "production", "candidate": "latest", "window_days": 30},
    )
    rec.post(
        "release_impact of a split",
        "/api/releases/impact",
        {"label": "canary", "candidate": {"release": 3}},
    )
    rec.get("list_labels", "/api/labels")
    for label in ("beta", "canary", "gated", "production", "staging"):
        rec.get(f"get_label {label}", f"/api/labels/{label}")
        rec.get(f"list_label_moves {label}", f"/api/labels/{label}/history")
    rec.get("list_labels as a host", "/api/labels", "host-a")
    rec.get("list_test_contexts", "/api/test-contexts")
    for name in ("ctx-anthropic", "ctx-openai"):
        rec.get(f"get_test_context {name}", f"/api/test-contexts/{name}")
    for host in ("host-a", "host-b"):
        rec.get(f"get_agent_host_label {host}", f"/api/agent-hosts/{host}/label")


def evaluation_reads(rec: Recorder) -> None:
    rec.get("list_models", "/api/models")
    rec.get("list_suites", "/api/suites")
    for suite in ("regressions", "smoke"):
        rec.get(f"get_suite {suite}", f"/api/suites/{suite}")
        cases = rec.get(f"list_cases {suite}", f"/api/suites/{suite}/cases")
        for case in cases["json"]["results"]:
            rec.get(f"get_case {suite}/{case['name']}", f"/api/suites/{suite}/cases/{case['name']}")
        rec.get(f"export_cases {suite}", f"/api/suites/{suite}/export")
    rec.get("list_evaluations", "/api/evaluations")
    for run in (1, 2, 3, 4):
        rec.get(f"get_evaluation {run}", f"/api/evaluations/{run}")
        rec.get(f"get_evaluation_results {run}", f"/api/evaluations/{run}/results")
    rec.get("list_evaluations as a host", "/api/evaluations", "host-a")


def event_reads(rec: Recorder) -> None:
    rec.get("list_webhooks", "/api/webhooks")
    for webhook in (1, 2, 3):
        rec.get(f"get_webhook {webhook}", f"/api/webhooks/{webhook}")
        rec.get(f"list_webhook_deliveries {webhook}", f"/api/webhooks/{webhook}/deliveries")
    rec.get("list_audit", "/api/audit?page_size=200")
    rec.get("list_audit of one actor", "/api/audit?actor=publisher")
    rec.get("list_audit of an action", "/api/audit?action=label.")
    rec.get("health", "/api/health", "host-b")


MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}


def client_and_mcp(rec: Recorder) -> None:
    """The Python client's ``system_prompt`` for existing conversations (its answer and
    its requests), and ``/mcp``'s prompt and tools."""
    rec.send(
        wire.Exchange(
            "client system_prompt a-1",
            "CLIENT",
            "",
            "host-a",
            body={"conversation_id": "a-1", "cwd": CWD_A, "model": "gpt-4o", "provider": "openai"},
        )
    )
    rec.send(
        wire.Exchange(
            "client system_prompt b-1, another model",
            "CLIENT",
            "",
            "host-b",
            body={"conversation_id": "b-1", "cwd": CWD_B, "model": "other"},
        )
    )
    rec.send(
        wire.Exchange(
            "client system_prompt a-empty",
            "CLIENT",
            "",
            "host-a",
            body={"conversation_id": "a-empty", "cwd": CWD_A},
        )
    )
    calls = [
        (
            "mcp get_system_prompt a-1",
            "host-a",
            "tools/call",
            {"name": "get_system_prompt", "arguments": {"conversation_id": "a-1", "cwd": CWD_A}},
        ),
        (
            "mcp system-prompt b-2",
            "host-b",
            "prompts/get",
            {"name": "system-prompt", "arguments": {"conversation_id": "b-2", "cwd": CWD_B}},
        ),
        ("mcp list_labels", "author", "tools/call", {"name": "list_labels", "arguments": {}}),
        (
            "mcp get_fragment",
            "host-a",
            "tools/call",
            {"name": "get_fragment", "arguments": {"name": "team/notes", "provider": "anthropic"}},
        ),
        ("mcp list_fragments", "host-b", "tools/call", {"name": "list_fragments", "arguments": {}}),
    ]
    for name, actor, method, params in calls:
        rec.post(
            name,
            "/mcp",
            {"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
            actor,
            headers=MCP_HEADERS,
        )


def editor_pages(rec: Recorder) -> None:
    """Logged in as the admin, the editor's pages of today (status and type only)."""
    rec.get("login page", "/accounts/login/", None, page=True)
    rec.send(
        wire.Exchange(
            "login",
            "POST",
            "/accounts/login/",
            None,
            page=True,
            form={"username": "admin", "password": wire.ADMIN_PASSWORD},
        )
    )
    pages = [
        "/",
        "/editor/",
        "/editor/history",
        "/editor/history/4.json",
        "/library/",
        "/library/core",
        "/library/team/notes?provider=anthropic",
        "/library/team/notes/-/history",
        "/library/-/transfer",
        "/agent-hosts/",
        "/webhooks/",
        "/webhooks/1/",
        "/webhooks/1/log",
        "/audit/",
        "/releases/",
        "/releases/labels/production/",
        "/evaluations/",
        "/evaluations/runs/1/",
        "/conversations/",
        "/conversations/a-1/",
        "/conversations/gone-1/",
    ]
    for path in pages:
        rec.get(f"page {path}", path, "session", page=True)


def writes(rec: Recorder) -> None:
    """The writes of today's clients on the database as it is: each takes the next id
    its table's sequence gives, and the audit log's newest records say what they did."""
    got = rec.get("get_template before saving", "/api/system-prompt")
    rec.send(
        wire.Exchange(
            "save_template",
            "PUT",
            "/api/system-prompt",
            "author",
            body={"template": TEMPLATE_4 + "Saved after the upgrade.\n"},
            headers={"If-Match": got["headers"]["etag"]},
            write=True,
        )
    )
    rec.send(
        wire.Exchange(
            "save_template, stale",
            "PUT",
            "/api/system-prompt",
            "author",
            body={"template": "stale"},
            headers={"If-Match": got["headers"]["etag"]},
            write=True,
        ),
        412,
    )
    variant = rec.get("get_fragment_variant before saving", "/api/library/fragments/team/notes")
    rec.send(
        wire.Exchange(
            "save_fragment_variant",
            "PUT",
            "/api/library/fragments/team/notes",
            "author",
            body={"text": "Notes v4.\n"},
            headers={"If-Match": variant["headers"]["etag"]},
            write=True,
        )
    )
    rec.send(
        wire.Exchange(
            "create_release",
            "POST",
            "/api/releases",
            "author",
            body={"message": "After the upgrade"},
            write=True,
        ),
        201,
    )
    rec.send(
        wire.Exchange(
            "set_label staging",
            "PUT",
            "/api/labels/staging",
            "author",
            body={"target": {"release": 4}, "message": "Next"},
            write=True,
        )
    )
    rec.send(
        wire.Exchange(
            "set_label production, not a publisher",
            "PUT",
            "/api/labels/production",
            "author",
            body={"target": {"release": 4}},
            write=True,
        ),
        403,
    )
    rec.send(
        wire.Exchange(
            "rollback_label canary",
            "POST",
            "/api/labels/canary/rollback",
            "author",
            body={},
            write=True,
        )
    )
    rec.send(
        wire.Exchange(
            "resolve a new conversation",
            "POST",
            "/api/conversations/a-new/system-prompt/resolve",
            "host-a",
            body={"cwd": CWD_A, "model": "gpt-4o", "provider": "openai", "tools": ["shell"]},
            write=True,
        ),
        201,
    )
    rec.send(
        wire.Exchange(
            "construct b-1",
            "POST",
            "/api/conversations/b-1/system-prompt/construct",
            "host-b",
            body={"cwd": CWD_B, "model": "claude-sonnet-4-5", "provider": "anthropic"},
            write=True,
        ),
        200,
    )
    rec.send(
        wire.Exchange(
            "construct a-constructed with its whole context",
            "POST",
            "/api/conversations/a-constructed/system-prompt/construct",
            "host-a",
            body={
                "cwd": CWD_A,
                "model": "gpt-4o",
                "provider": "openai",
                "tools": [],
                "variables": {"team": "payments"},
                "override": None,
            },
            write=True,
        ),
        200,
    )
    rec.send(
        wire.Exchange(
            "compact a-compacted with its whole context",
            "POST",
            "/api/conversations/a-compacted/system-prompt/compact",
            "host-a",
            body={
                "cwd": CWD_A,
                "model": "",
                "provider": "",
                "tools": ["grep"],
                "variables": {},
                "override": None,
            },
            write=True,
        ),
        200,
    )
    rec.send(
        wire.Exchange(
            "compact gone-1 by an author",
            "POST",
            "/api/conversations/gone-1/system-prompt/compact",
            "admin",
            body={"cwd": "/srv/agents/gone"},
            write=True,
        ),
        200,
    )
    rec.send(
        wire.Exchange(
            "delete_conversation_prompt a-2",
            "DELETE",
            "/api/conversations/a-2/system-prompt",
            "host-a",
            write=True,
        ),
        204,
    )
    rec.send(
        wire.Exchange(
            "set_agent_host_override host-b",
            "PUT",
            "/api/agent-hosts/host-b/override",
            "publisher",
            body={"override": "Host B after the upgrade."},
            write=True,
        )
    )
    rec.send(
        wire.Exchange(
            "set_agent_host_label host-b",
            "PUT",
            "/api/agent-hosts/host-b/label",
            "publisher",
            body={"label": "canary"},
            write=True,
        )
    )
    rec.send(
        wire.Exchange(
            "create_test_context",
            "POST",
            "/api/test-contexts",
            "author",
            body={"name": "ctx-new", "values": {"prompt:cwd": "/srv/new"}},
            write=True,
        ),
        201,
    )
    rec.send(
        wire.Exchange(
            "create_case",
            "POST",
            "/api/suites/smoke/cases",
            "author",
            body={"name": "new-case", "messages": [{"role": "user", "content": "New"}]},
            write=True,
        ),
        201,
    )
    rec.send(
        wire.Exchange(
            "start_evaluation",
            "POST",
            "/api/evaluations",
            "author",
            body={
                "suite": "smoke",
                "candidate": "latest",
                "baseline": {"label": "staging"},
                "model": "echo",
            },
            write=True,
        ),
        202,
    )
    rec.send(
        wire.Exchange(
            "create_webhook",
            "POST",
            "/api/webhooks",
            "admin",
            body={"url": "https://hooks.example.com/x", "events": ["template.saved"]},
            write=True,
        ),
        201,
    )
    rec.get("list_template_versions after the writes", "/api/system-prompt/versions?page_size=3")
    rec.get("list_releases after the writes", "/api/releases?page_size=2")
    rec.get("list_conversations after the writes", "/api/conversations?page_size=3")
    rec.get("list_audit after the writes", "/api/audit?page_size=20")


# --- 4. The fixture checked ----------------------------------------------------------


def fixture_check(out: Path, folder: Path) -> None:
    """``replay.py load`` then ``answers`` on a second database, under this old code: the
    answers must be the recorded ones (no migration ran, so nothing may differ but the
    volatile fields), and no stored row may be missing."""
    env = wire.environment(os.environ, f"sqlite:///{folder / 'check.sqlite3'}")
    script = str(UPGRADE / "replay.py")
    for step in (["load", str(out)], ["answers", str(out), str(folder / "check.json")]):
        subprocess.run([sys.executable, script, *step], cwd=OLD, env=env, check=True)
    checked = json.loads((folder / "check.json").read_text())
    recorded = json.loads((out / "answers.json").read_text())
    assert checked["rows"] == [], checked["rows"]
    found = differences(recorded["answers"], checked["answers"])
    if found:
        raise SystemExit("the fixture does not answer as recorded:\n" + "\n".join(found))


if __name__ == "__main__":
    main(sys.argv[1:])
