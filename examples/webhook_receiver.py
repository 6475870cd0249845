"""A small webhook receiver to try atrium's webhooks with (docs/guide/webhooks.md).

    python examples/webhook_receiver.py --secret whsec_… [--port 9000]

It listens on http://127.0.0.1:9000/ (any path), checks each delivery's Standard Webhooks
signature with the endpoint's secret, and prints one line per delivery:

    verified run.completed run_… (msg_…)

A delivery with a missing, stale or wrong signature is answered 401 and printed as `rejected:`;
the same `webhook-id` a second time (a retry of a delivery already handled) as `duplicate`.
Standard library only: copy it anywhere that has Python 3.11. The address is loopback: atrium
sends to loopback and private addresses only with `ATRIUM_ALLOW_PRIVATE_TARGETS=true` (for local
development only; see docs/guide/webhooks.md).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import hmac
import json
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer

# Refuse deliveries signed longer ago (or further ahead) than this: a captured request cannot
# be replayed later. Standard Webhooks libraries use the same five minutes.
TOLERANCE_SECONDS = 5 * 60


class InvalidSignature(Exception):
    """The delivery was not signed by atrium with this endpoint's secret."""


def verify(secret: str, headers: dict[str, str], body: bytes) -> None:
    """Raise `InvalidSignature` unless `body` carries a valid signature made with `secret`.

    The signed content is `{webhook-id}.{webhook-timestamp}.{body}`, the key is the base64
    after `whsec_`, the signature HMAC-SHA256 in base64; `webhook-signature` holds one or more
    `v1,<signature>`, separated by spaces.
    """
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not (msg_id and timestamp and signatures):
        raise InvalidSignature("missing webhook-id, webhook-timestamp or webhook-signature")
    try:
        sent_at = int(timestamp)
    except ValueError:
        raise InvalidSignature(f"bad webhook-timestamp {timestamp!r}") from None
    if abs(time.time() - sent_at) > TOLERANCE_SECONDS:
        raise InvalidSignature(f"webhook-timestamp {sent_at} is too far from now")
    key = base64.b64decode(secret.removeprefix("whsec_"))
    content = f"{msg_id}.{sent_at}.".encode() + body
    expected = base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()
    for signature in signatures.split():
        version, _, value = signature.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return
    raise InvalidSignature("no signature matches this secret")


class Receiver(HTTPServer):
    """One endpoint's receiver: its secret, and the deliveries already handled."""

    def __init__(self, port: int, secret: str) -> None:
        super().__init__(("127.0.0.1", port), Delivery)
        self.secret = secret
        self.seen: set[str] = set()


class Delivery(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            verify(self.server.secret, headers, body)
        except InvalidSignature as error:
            print(f"rejected: {error}", flush=True)
            self._answer(HTTPStatus.UNAUTHORIZED)
            return
        msg_id = headers["webhook-id"]
        if msg_id in self.server.seen:  # delivery is at least once: handle each webhook-id once
            print(f"duplicate {msg_id}", flush=True)
            self._answer(HTTPStatus.NO_CONTENT)
            return
        self.server.seen.add(msg_id)
        run = json.loads(body)
        # The body is the run; the event is named after its status (run.completed, …).
        print(f"verified run.{run['status']} {run['run_id']} ({msg_id})", flush=True)
        self._answer(HTTPStatus.NO_CONTENT)

    def _answer(self, status: HTTPStatus) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per delivery is printed above


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--secret", required=True, help="the endpoint's signing secret, whsec_…")
    parser.add_argument("--port", type=int, default=9000, help="port on 127.0.0.1 (9000)")
    args = parser.parse_args()
    server = Receiver(args.port, args.secret)
    print(f"listening on http://127.0.0.1:{args.port}/", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
