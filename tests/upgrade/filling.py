"""The upgrade fixture's first part: a fresh database filled through the old code's own
API, pages and commands, as its users would (``make_fixture.py`` runs it under that
code; see its description). Each function fills one area; :func:`fill` runs them in a
plausible order. The app is served in-process over WSGI (:class:`Api`)."""

from __future__ import annotations

import base64
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import import_module
from typing import Any

import httpx

from tests.upgrade import wire

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
