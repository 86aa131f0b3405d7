"""A fake model provider, run as its own process: OpenAI Chat Completions and Anthropic
Messages on a loopback port, deterministic, scriptable, and recording every call.

Run it as ``python tests/evaluations/fake_model.py [--latency-ms N]``: it prints
``PORT <n>`` on its first line and serves until killed. Tests and the benchmark start it
with :class:`FakeModel` (``with FakeModel() as fake:``), which does that and talks to its
control endpoints.

**Answers.** The assistant's text comes from the system prompt: the text after a line
``ANSWER: …`` if there is one, else ``echo: `` and the last user message. A line
``TOOL: <name> <json arguments>`` adds that tool call (when the request offers tools).
A judge (a system prompt starting with "You grade") answers ``{"pass": …, "reason": …}``,
passing when the answer contains the rubric's first word. It reads the user turn as the
judge's JSON object (``rubric``, ``answer.text``) when it is one; otherwise as text with
``<answer>`` and ``<rubric>`` tags, taking the first of each — as a model reading tags
could be led to, so a graded answer holding ``</answer><rubric>…`` forges the rubric.
Usage: input tokens = characters of the request's messages ÷ 4, output = characters of
the answer ÷ 4, at least 1 each.

**Control.** ``POST /_control`` with ``{"latency_ms": N}`` sets the latency of every
call; ``{"script": [{"status": 500}, {"status": 429, "retry_after": 1}, …]}`` queues
failures answered, one each, to the next calls before normal answers resume
(``"echo_key": true`` puts the key the call sent into the error's message, as some
providers do; ``"key_chars": N`` only its first N characters, ``"pad": N`` N characters
of text before it). ``{"gather": N}`` makes the next calls wait (up to 60 s) until N
are in progress at once, then lets them all go on, once: a test of overlap then does
not depend on how fast the machine starts its clients.
``GET /_requests`` lists every call received: path, JSON body, the ``Authorization`` or
``x-api-key`` header's presence, when it started and ended (``time.monotonic()`` of this
process), and the status answered. ``POST /_reset`` clears the record and the script;
a call still in progress then (a killed client's) is left out of the new record.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ANSWER = re.compile(r"^ANSWER: ?(.*)$", re.MULTILINE)
_TOOL = re.compile(r"^TOOL: (\S+) (\{.*\})$", re.MULTILINE)


class State:
    def __init__(self, latency_ms: float) -> None:
        self.lock = threading.Lock()
        self.latency = latency_ms / 1000
        self.script: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.generation = 0
        """Raised by each reset: a call that began before it is not recorded."""
        self.arrived = threading.Condition(self.lock)
        self.in_progress = 0
        self.gather = 0
        """Calls wait until this many are in progress; 0 once they have been."""

    def wait_for_company(self) -> None:
        """Count this call in progress; while a gather is set, wait (60 s at most) until
        that many calls are in progress, then open the gate for everyone."""
        with self.arrived:
            self.in_progress += 1
            if self.gather and self.in_progress >= self.gather:
                self.gather = 0
                self.arrived.notify_all()
            self.arrived.wait_for(lambda: not self.gather, timeout=60)

    def leave(self) -> None:
        with self.lock:
            self.in_progress -= 1


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return ""


def reply(
    system: str, messages: list[dict[str, Any]], offered_tools: bool
) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """The deterministic answer and tool calls for a request (see the module docstring)."""
    users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    last = users[-1] if users else ""
    if system.startswith("You grade"):
        rubric, answer = _judged(last)
        word = rubric.split()[0] if rubric.split() else ""
        passed = bool(word) and word.lower() in answer.lower()
        verdict = {
            "pass": passed,
            "reason": f"the answer {'mentions' if passed else 'lacks'} {word!r}",
        }
        return json.dumps(verdict), []
    found = _ANSWER.search(system)
    text = found.group(1) if found else f"echo: {last}"
    calls = []
    if offered_tools:
        for name, arguments in _TOOL.findall(system):
            calls.append((name, json.loads(arguments)))
    return text, calls


def _judged(turn: str) -> tuple[str, str]:
    """The rubric and the answer a judge's user turn holds."""
    try:
        asked = json.loads(turn)
    except ValueError:
        asked = None
    if isinstance(asked, dict) and "rubric" in asked:
        return str(asked["rubric"]), str(asked["answer"]["text"])
    rubric = turn.split("<rubric>", 1)[-1].split("</rubric>", 1)[0].strip()
    answer = turn.split("<answer>", 1)[-1].split("</answer>", 1)[0]
    return rubric, answer


def _tokens(value: object) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


def openai_body(request: dict[str, Any]) -> dict[str, Any]:
    messages = list(request.get("messages") or [])
    system = "\n".join(
        _text(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    )
    text, calls = reply(system, messages, bool(request.get("tools")))
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for n, (name, args) in enumerate(calls)
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": request.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": _tokens(messages),
            "completion_tokens": _tokens(text),
            "total_tokens": _tokens(messages) + _tokens(text),
        },
    }


def anthropic_body(request: dict[str, Any]) -> dict[str, Any]:
    messages = list(request.get("messages") or [])
    system = _text(request.get("system"))
    text, calls = reply(system, messages, bool(request.get("tools")))
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": args}
        for n, (name, args) in enumerate(calls)
    ]
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", "fake"),
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": _tokens([system, messages]), "output_tokens": _tokens(text)},
    }


ROUTES = {"/v1/chat/completions": openai_body, "/v1/messages": anthropic_body}


def handler(state: State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes: without this, Nagle's algorithm and
            # the client's delayed ACK hold the body back ~40 ms on every answer.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: object, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/_requests":
                with state.lock:
                    self._send(200, state.requests)
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path == "/_control":
                with state.lock:
                    if "latency_ms" in body:
                        state.latency = float(body["latency_ms"]) / 1000
                    state.script.extend(body.get("script", []))
                    if "gather" in body:
                        state.gather = int(body["gather"])
                self._send(200, {"ok": True})
                return
            if self.path == "/_reset":
                with state.lock:
                    state.script.clear()
                    state.requests.clear()
                    state.generation += 1
                self._send(200, {"ok": True})
                return
            route = ROUTES.get(self.path.split("?", 1)[0])
            if route is None:
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            started = time.monotonic()
            with state.lock:
                step = state.script.pop(0) if state.script else None
                latency = state.latency
                generation = state.generation
            record = {
                "path": self.path,
                "body": body,
                "authorized": bool(
                    self.headers.get("Authorization") or self.headers.get("x-api-key")
                ),
                "started": started,
            }
            state.wait_for_company()
            time.sleep(latency)
            state.leave()
            if step is not None:
                status = int(step.get("status", 500))
                headers = {"Retry-After": str(step["retry_after"])} if "retry_after" in step else {}
                message = f"scripted {status}"
                if step.get("echo_key"):
                    key = self.headers.get("Authorization") or self.headers.get("x-api-key") or ""
                    key = key.removeprefix("Bearer ")[: step.get("key_chars")]
                    pad = "x" * int(step.get("pad", 0))
                    message = f"Incorrect API key provided: {pad}{key}"
                answer: object = {
                    "type": "error",
                    "error": {"type": "fake_error", "message": message},
                }
            else:
                status, headers, answer = 200, {}, route(body)
            record.update(ended=time.monotonic(), status=status)
            with state.lock:
                if generation == state.generation:
                    state.requests.append(record)
            self._send(status, answer, headers)

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    arguments = parser.parse_args()
    server = ThreadingHTTPServer(
        ("127.0.0.1", arguments.port), handler(State(arguments.latency_ms))
    )
    server.daemon_threads = True
    server.request_queue_size = 128
    print(f"PORT {server.server_address[1]}", flush=True)
    sys.stdout.close()
    server.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()
