"""The gate of every API group: authentication, rate limits and body bounds, in that order
(a 429 before a 401, both before a 413 or 415; docs/design.md#rate-limits).

It runs as ASGI middleware rather than as route dependencies so that *every* response of a
group, unknown paths and wrong methods included, is authenticated and counted and carries the
`X-RateLimit-*` headers. Requests without a valid key are counted per client address under the
anonymous limit, so a 401 carries the headers too (and guessing keys is rate limited).
"""

from __future__ import annotations

import functools

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from atrium.auth.keys import looks_like_key
from atrium.auth.service import Principal, authenticate
from atrium.db.engine import Database
from atrium.errors import PayloadTooLarge, RateLimited, Unauthorized, UnsupportedMediaType
from atrium.http.asgi import extra_headers, header, send_error, state
from atrium.http.groups import Group, group_for
from atrium.ratelimit.limiter import RateLimiter

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data", "application/json")
_JSON_TYPES = ("application/json",)
_MULTIPART = "multipart/form-data"


def _bearer(scope: Scope) -> str | None:
    value = header(scope, b"authorization")
    if value is None:
        return None
    scheme, _, token = value.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _media_type(scope: Scope) -> str | None:
    value = header(scope, b"content-type")
    return None if value is None else value.split(";", 1)[0].strip().lower()


class GatewayMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        db: Database,
        limiter: RateLimiter,
        max_body_bytes: int,
        upload_paths: frozenset[str] = frozenset(),
    ) -> None:
        self.app = app
        self.db = db
        self.limiter = limiter
        self.max_body_bytes = max_body_bytes
        # Paths that take a file (`multipart/form-data`): their endpoint reads the body as it
        # arrives and bounds it by its own, larger cap (`files.upload`), so it is neither
        # held to `max_body_bytes` nor buffered here.
        self.upload_paths = upload_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        group = group_for(scope["path"]) if scope["type"] == "http" else None
        if group is None:
            await self.app(scope, receive, send)
            return

        principal = await self._authenticate(scope)
        if principal is None:
            client = scope.get("client")
            identity, tier = f"ip:{client[0] if client else 'unknown'}", "anonymous"
        else:
            identity, tier = f"key:{principal.key_id}", principal.tier
        verdict = await self.limiter.hit(group=group.name, identity=identity, tier=tier)
        extra_headers(scope).update(verdict.headers())

        if not verdict.allowed:
            await send_error(
                scope,
                send,
                RateLimited(
                    "rate limit exceeded; retry after the window resets",
                    details={"limit": verdict.limit, "reset": verdict.reset},
                ),
            )
            return
        if principal is None:
            await send_error(
                scope,
                send,
                Unauthorized("missing or invalid API key; send 'Authorization: Bearer <key>'"),
            )
            return
        state(scope)["principal"] = principal
        state(scope)["group"] = group.name

        if scope["method"] in _BODY_METHODS and scope["path"] in self.upload_paths:
            if _media_type(scope) not in (None, _MULTIPART):
                await send_error(
                    scope,
                    send,
                    UnsupportedMediaType(
                        f"Content-Type must be {_MULTIPART}",
                        details={"content_type": _media_type(scope)},
                    ),
                )
                return
        elif scope["method"] in _BODY_METHODS:
            failure = self._check_body_headers(scope, group)
            if failure is not None:
                await send_error(scope, send, failure)
                return
            if header(scope, b"content-length") is None:
                replay = await self._buffer_unsized_body(scope, receive, send)
                if replay is None:
                    return
                receive = replay
        await self.app(scope, receive, send)

    async def _authenticate(self, scope: Scope) -> Principal | None:
        key = _bearer(scope)
        if key is None:
            return None
        if not looks_like_key(key):
            return None  # no query for what cannot be a key
        return await self.db.point_read(functools.partial(authenticate, key=key))

    def _check_body_headers(
        self, scope: Scope, group: Group
    ) -> PayloadTooLarge | UnsupportedMediaType | None:
        length = header(scope, b"content-length")
        # isascii: str.isdigit also accepts "²", which int() refuses.
        if (
            length is not None
            and length.isascii()
            and length.isdigit()
            and int(length) > self.max_body_bytes
        ):
            return PayloadTooLarge(
                f"request body is larger than {self.max_body_bytes} bytes",
                details={"limit": self.max_body_bytes},
            )
        media_type = _media_type(scope)
        allowed = _JSON_TYPES if group.body == "json" else _FORM_TYPES
        # A request with no body and no Content-Type is judged by the endpoint ("body missing").
        if media_type is not None and media_type not in allowed:
            return UnsupportedMediaType(
                f"Content-Type must be one of {', '.join(allowed)}",
                details={"content_type": media_type},
            )
        return None

    async def _buffer_unsized_body(
        self, scope: Scope, receive: Receive, send: Send
    ) -> Receive | None:
        """Read a chunked body up to the limit; None (413 sent) when it is larger."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                await send_error(
                    scope,
                    send,
                    PayloadTooLarge(
                        f"request body is larger than {self.max_body_bytes} bytes",
                        details={"limit": self.max_body_bytes},
                    ),
                )
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return replay
