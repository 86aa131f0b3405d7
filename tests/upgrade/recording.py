"""The upgrade fixture's requests: what today's clients ask, sent to the filled database
and kept with the answers (``make_fixture.py`` runs it under the old code; the test's
``replay.py`` sends the same requests again). Each function asks about one area;
:func:`exchanges` runs them: reads first, then writes."""

from __future__ import annotations

import base64
import dataclasses
import io
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from tests.upgrade import replay, wire
from tests.upgrade.filling import CWD_A, CWD_B, TEMPLATE_4, Api


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
    # Last: named prompts make this a first turn of host-b's own a-1 (ids scoped to
    # their host), which would change the answers after it.
    rec.send(
        wire.Exchange(
            "resolve of another host's conversation",
            "POST",
            "/api/conversations/a-1/system-prompt/resolve",
            "host-b",
            body={"cwd": CWD_B},
            write=True,
        ),
        404,
    )
