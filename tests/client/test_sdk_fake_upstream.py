"""A fake provider upstream for the SDK tests: a real HTTP server on 127.0.0.1.

:class:`FakeUpstream` answers canned JSON per path (an OpenAI chat completion, an OpenAI
response, an Anthropic message) and records every request — method, path, headers and
JSON body — so a test asserts the exact body a real SDK sent. No network: the server
listens on a free port of the loopback interface, in a thread, for one test.

The tests below check the fake itself; the SDK tests import :class:`FakeUpstream` from
here (``with FakeUpstream() as upstream:`` in their own fixture).
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

USAGE_OPENAI_CHAT = {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}

CHAT_COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-fake",
    "object": "chat.completion",
    "created": 1_700_000_000,
    "model": "gpt-fake",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "fake answer", "refusal": None},
            "finish_reason": "stop",
            "logprobs": None,
        }
    ],
    "usage": USAGE_OPENAI_CHAT,
}

RESPONSE: dict[str, Any] = {
    "id": "resp_fake",
    "object": "response",
    "created_at": 1_700_000_000,
    "status": "completed",
    "model": "gpt-fake",
    "output": [
        {
            "type": "message",
            "id": "msg_fake",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "fake answer", "annotations": []}],
        }
    ],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "usage": {
        "input_tokens": 5,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 6,
    },
}

ANTHROPIC_MESSAGE: dict[str, Any] = {
    "id": "msg_fake",
    "type": "message",
    "role": "assistant",
    "model": "claude-fake",
    "content": [{"type": "text", "text": "fake answer"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 5, "output_tokens": 1},
}

CANNED: dict[str, dict[str, Any]] = {
    "/v1/chat/completions": CHAT_COMPLETION,
    "/v1/responses": RESPONSE,
    "/v1/messages": ANTHROPIC_MESSAGE,
}


@dataclass(frozen=True)
class Recorded:
    """One request the fake received."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any


class FakeUpstream:
    """A local HTTP server answering ``responses[path]`` as JSON (404 for other paths); a
    list under a path is answered one after the other, its last answer repeated."""

    def __init__(self, responses: Mapping[str, Any] | None = None) -> None:
        self._responses = dict(CANNED if responses is None else responses)
        self._lock = threading.Lock()
        self._requests: list[Recorded] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    def last_body(self) -> Any:
        """The JSON body of the only request received (fails if there were several)."""
        requests = self.requests
        assert len(requests) == 1, [r.path for r in requests]
        return requests[0].body

    def start(self) -> FakeUpstream:
        self._thread.start()
        return self

    def __enter__(self) -> FakeUpstream:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _record(self, request: Recorded) -> Any:
        path = request.path.split("?", 1)[0]
        with self._lock:
            self._requests.append(request)
            canned = self._responses.get(path)
            if isinstance(canned, Sequence):  # answered in turn, the last one repeated
                self._responses[path] = canned[1:] or canned
                return canned[0]
            return canned

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self._answer()

            def do_GET(self) -> None:
                self._answer()

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                headers = {key.lower(): value for key, value in self.headers.items()}
                canned = upstream._record(Recorded(self.command, self.path, headers, body))
                status = 200 if canned is not None else 404
                payload = json.dumps(
                    canned if canned is not None else {"error": {"message": "no such path"}}
                ).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet

        return Handler


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream() as fake:
        yield fake


def _post(url: str, body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


def test_fake_upstream_answers_canned_json_and_records_the_body(
    upstream: FakeUpstream,
) -> None:
    assert upstream.url.startswith("http://127.0.0.1:")
    status, answer = _post(upstream.url + "/v1/messages", {"a": [1, "é"]})
    assert (status, answer) == (200, ANTHROPIC_MESSAGE)
    (recorded,) = upstream.requests
    assert (recorded.method, recorded.path, recorded.body) == (
        "POST",
        "/v1/messages",
        {"a": [1, "é"]},
    )
    assert recorded.headers["content-type"] == "application/json"
    assert upstream.last_body() == {"a": [1, "é"]}


def test_fake_upstream_answers_a_list_in_turn() -> None:
    with FakeUpstream({"/a": [{"n": 1}, {"n": 2}]}) as fake:
        answers = [_post(fake.url + "/a", {}) for _ in range(3)]
    assert answers == [(200, {"n": 1}), (200, {"n": 2}), (200, {"n": 2})]


def test_fake_upstream_answers_404_for_other_paths(upstream: FakeUpstream) -> None:
    status, answer = _post(upstream.url + "/v1/nothing", {})
    assert status == 404
    assert answer == {"error": {"message": "no such path"}}
    assert [r.path for r in upstream.requests] == ["/v1/nothing"]
