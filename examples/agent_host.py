"""An agent host's loop with sysprompt-client: first turn, later turns from the cache, a
sysprompt server restart in the middle, and a compaction.

    .venv/bin/python examples/agent_host.py                      # all local, no network
    .venv/bin/python examples/agent_host.py --base-url https://api.openai.com/v1 \\
        --api-key "$OPENAI_API_KEY" --model gpt-4.1-mini           # a real provider
    .venv/bin/python examples/agent_host.py --server http://127.0.0.1:8000 --token KEY

By default it starts its own sysprompt server from this checkout (``manage.py
runserver`` on a temporary SQLite file), so it can stop and start it mid-conversation,
and talks to a tiny OpenAI-compatible fake provider that runs in this process and
records the system prompt of every call. With ``--server`` it uses yours (and skips
the restart). The system prompt goes into each request with
``sysprompt_client.openai_chat``: prepended, never stored in the history.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from sysprompt_client import Client, PromptResult, openai_chat

REPO = Path(__file__).resolve().parent.parent


# A fake provider: OpenAI's /chat/completions, answering with a canned reply ----------


class FakeProvider(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _FakeHandler)
        self.system_prompts: list[str | None] = []
        self.url = f"http://127.0.0.1:{self.server_address[1]}/v1"
        threading.Thread(target=self.serve_forever, daemon=True).start()


class _FakeHandler(BaseHTTPRequestHandler):
    server: FakeProvider

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        messages = body["messages"]
        system = messages[0]["content"] if messages[0]["role"] == "system" else None
        self.server.system_prompts.append(system)
        words = len(str(messages[-1]["content"]).split())
        reply = {
            "id": f"chatcmpl-{len(self.server.system_prompts)}",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": f"(fake) {words} words heard."},
                }
            ],
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


# A sysprompt server of this checkout, which the example may stop and start ----------


class LocalSysprompt:
    def __init__(self, folder: Path) -> None:
        self.cwd = str(folder / "project")
        os.makedirs(self.cwd)
        Path(self.cwd, "AGENTS.md").write_text("Answer briefly. Run the tests before commits.\n")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{folder / 'sysprompt.sqlite3'}",
            "SECRET_KEY": "agent-host-example",
            "DEBUG": "false",
            "SYSPROMPT_ALLOWED_ROOTS": str(folder),
        }
        self.process: subprocess.Popen[bytes] | None = None
        self._manage("migrate", "--noinput")
        self.token = self._manage("create_agent_host", "example-host").splitlines()[-1].strip()

    def _manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    def start(self) -> None:
        command = ["manage.py", "runserver", "--noreload", f"127.0.0.1:{self.port}"]
        self.process = subprocess.Popen(
            [sys.executable, *command],
            cwd=REPO,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(
                    f"{self.url}/api/health", headers={"Authorization": f"Token {self.token}"}
                )
                return
            except httpx.TransportError:
                time.sleep(0.1)
        raise SystemExit("the sysprompt server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait()
            self.process = None


# The host -----------------------------------------------------------------------------


class Host:
    """One conversation: the history it stores never contains the system prompt."""

    def __init__(self, client: Client, provider: httpx.Client, model: str, cwd: str) -> None:
        self.client = client
        self.provider = provider
        self.model = model
        self.cwd = cwd
        self.conversation_id = f"example-{uuid.uuid4()}"
        self.history: list[dict[str, Any]] = []

    def complete(self, messages: list[dict[str, Any]], prompt: PromptResult | str | None) -> str:
        request = {"model": self.model, **openai_chat(messages, prompt)}
        answer = self.provider.post("/chat/completions", json=request)
        answer.raise_for_status()
        return str(answer.json()["choices"][0]["message"]["content"])

    def turn(self, text: str) -> PromptResult:
        prompt = self.client.system_prompt(self.conversation_id, cwd=self.cwd, model=self.model)
        self.history.append({"role": "user", "content": text})
        reply = self.complete(self.history, prompt)
        self.history.append({"role": "assistant", "content": reply})
        return prompt

    def compact(self) -> PromptResult:
        compacted = self.client.compact(self.conversation_id, cwd=self.cwd, model=self.model)
        request = [*self.history, {"role": "user", "content": "Summarise our conversation."}]
        summary = self.complete(request, compacted.compaction_prompt)
        self.history = [{"role": "user", "content": f"Summary so far: {summary}"}]
        return compacted.prompt


def show(step: str, prompt: PromptResult, sent: list[tuple[str, str]]) -> None:
    sha = (prompt.sha256 or "none")[:12]
    where = "fallback" if prompt.is_fallback else "cache" if prompt.from_cache else "server"
    print(f"{step:<34} prompt {sha}  from {where:<8}  sysprompt requests so far: {len(sent)}")


class Recorder(httpx.BaseTransport):
    """httpx's transport, noting each request to sysprompt (to show there are none)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.sent: list[tuple[str, str]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append((request.method, request.url.path))
        return self.inner.handle_request(request)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="an OpenAI-compatible provider (default: a fake)")
    parser.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY", "fake-key"))
    parser.add_argument("--model", default="gpt-4.1-mini")
    parser.add_argument("--server", help="a running sysprompt server (default: start one)")
    parser.add_argument("--token", default=os.environ.get("SYSPROMPT_TOKEN", ""))
    parser.add_argument("--cwd", default=os.getcwd(), help="the working directory (--server)")
    args = parser.parse_args()

    fake = None if args.base_url else FakeProvider()
    base_url = args.base_url or (fake.url if fake else "")
    provider = httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {args.api_key}"}, timeout=60
    )
    with tempfile.TemporaryDirectory() as folder:
        local = None if args.server else LocalSysprompt(Path(folder))
        url, token = (local.url, local.token) if local else (args.server, args.token)
        cwd = local.cwd if local else args.cwd
        if local:
            local.start()
        recorder = Recorder()
        client = Client(url, token, transport=recorder, max_age=1.0, fallback="Be helpful.")
        try:
            host = Host(client, provider, args.model, cwd)
            show("turn 1 (resolve)", host.turn("Hello, what can you do?"), recorder.sent)
            show("turn 2", host.turn("List the files."), recorder.sent)
            show("turn 3", host.turn("Now run the tests."), recorder.sent)
            if local:
                local.stop()
                show("turn 4 (sysprompt stopped)", host.turn("Still there?"), recorder.sent)
                local.start()
                time.sleep(1.1)  # older than max_age: revalidated in the background
                show("turn 5 (sysprompt restarted)", host.turn("Good."), recorder.sent)
            show("compaction", host.compact(), recorder.sent)
            show("turn after compaction", host.turn("Where were we?"), recorder.sent)
        finally:
            client.close()
            if local:
                local.stop()
    if fake:
        letters: dict[str | None, str] = {}
        calls = [letters.setdefault(p, "ABCDEFGH"[len(letters)]) for p in fake.system_prompts]
        print(f"System prompt of each provider call: {' '.join(calls)}")
        print("Same letter, same bytes: every turn sent the frozen prompt; the compaction turn")
        print("sent it with the compaction instructions; the prompt constructed afresh at the")
        print("compaction is the same as before unless the template or the project changed.")
        fake.shutdown()


if __name__ == "__main__":
    main()
