"""A webhook receiver for sysprompt's events: verifies each request's signature with the
``standardwebhooks`` library, skips events it has already seen, prints the rest.

    SYSPROMPT_WEBHOOK_SECRET=whsec_… python examples/webhook_receiver.py 8080

Answer quickly with a 2xx (sysprompt retries anything else, for up to a day) and do the
real work afterwards; a 401 for a request whose signature does not verify.
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook, WebhookVerificationError

verifier = Webhook(os.environ["SYSPROMPT_WEBHOOK_SECRET"])
seen: set[str] = set()  # webhook-ids already handled: a retry repeats the same id


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            event = verifier.verify(body, dict(self.headers))  # raises unless signed for us
        except WebhookVerificationError as error:
            self.send_response(401)
            self.end_headers()
            print(f"refused: {error}", flush=True)
            return
        self.send_response(204)
        self.end_headers()
        message_id = self.headers["webhook-id"]
        if message_id in seen:
            return
        seen.add(message_id)
        who = event["data"].get("actor") or "the system"
        print(f"{event['type']} by {who}: {json.dumps(event['data'])}", flush=True)

    def log_message(self, format: str, *args: object) -> None:
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8080
    print(f"listening on http://127.0.0.1:{port}/", flush=True)
    ThreadingHTTPServer(("127.0.0.1", port), Receiver).serve_forever()
