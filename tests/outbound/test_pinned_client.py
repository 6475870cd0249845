"""The pinned outbound client (docs/design.md#outbound): every connection resolved, checked and
pinned to a checked address (a real DNS server and real HTTP(S) servers on loopback; no public
address is ever contacted)."""

from __future__ import annotations

import ipaddress
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
import trustme

from atrium.outbound.pinned_client import outbound_client
from atrium.outbound.public_targets import TargetRefused, check_url
from atrium.outbound.resolver import Resolver
from atrium.settings import Settings
from tests.dns_server import DNSServer, dns_server

__all__ = ["dns_server"]

SETTING = "ATRIUM_ALLOW_PRIVATE_TARGETS"


class _Server:
    """An HTTP(S) server on 127.0.0.1 that answers with the Host header and SNI it received."""

    def __init__(self, context: ssl.SSLContext | None = None) -> None:
        self.hosts: list[str] = []
        self.server_names: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.hosts.append(self.headers["Host"])
                body = b"hello"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        if context is not None:

            def sni(_socket: ssl.SSLObject, name: str | None, _context: ssl.SSLContext) -> None:
                server.server_names.append(name)

            context.sni_callback = sni
            self.http.socket = context.wrap_socket(self.http.socket, server_side=True)
        self.port = self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def web() -> Iterator[_Server]:
    server = _Server()
    yield server
    server.stop()


def _settings(dns: DNSServer, *, allow_private: bool) -> Settings:
    return Settings(
        _env_file=None, dns_nameservers=[dns.address], allow_private_targets=allow_private
    )


# --- sending: resolve, check every address, connect to the checked one ------------------------


async def test_a_name_pointing_at_a_non_public_address_is_refused_when_connecting(
    dns_server: DNSServer, web: _Server
) -> None:
    # Registration passes (a name); the connection resolves it and refuses what it finds.
    url = f"http://hook.test:{web.port}/"
    assert check_url(url, allow_private=False) == url
    for address in ("127.0.0.1", "100.100.100.200", "::ffff:100.100.100.200", "fec0::1"):
        kind = "AAAA" if ":" in address else "A"
        dns_server.records["hook.test"] = {kind: [address]}
        async with outbound_client(_settings(dns_server, allow_private=False), timeout=5) as http:
            with pytest.raises(TargetRefused, match=f"hook.test .*{SETTING}=true"):
                await http.get(url)
    assert web.hosts == []


async def test_every_address_of_a_name_is_checked(dns_server: DNSServer, web: _Server) -> None:
    # One bad address among several is enough to refuse: the connection could land on any.
    dns_server.records["multi.test"] = {"A": ["127.0.0.1"], "AAAA": ["fec0::1"]}
    async with outbound_client(_settings(dns_server, allow_private=False), timeout=5) as http:
        with pytest.raises(TargetRefused, match=SETTING):
            await http.get(f"http://multi.test:{web.port}/")
    assert sorted(dns_server.asked("multi.test")) == ["A", "AAAA"]


async def test_a_cname_is_followed_and_its_target_checked(
    dns_server: DNSServer, web: _Server
) -> None:
    dns_server.records["alias.test"] = {"CNAME": ["inside.test"]}
    dns_server.records["inside.test"] = {"A": ["10.0.0.7"]}
    async with outbound_client(_settings(dns_server, allow_private=False), timeout=5) as http:
        with pytest.raises(TargetRefused, match=r"alias\.test \(10\.0\.0\.7\)"):
            await http.get(f"http://alias.test:{web.port}/")


async def test_the_connection_goes_to_the_checked_address_without_a_second_lookup(
    dns_server: DNSServer, web: _Server
) -> None:
    """DNS rebinding: the first answer is the one checked, a later one points elsewhere. The
    request reaches the first (the only server listens on 127.0.0.1; 127.0.0.2 refuses), with
    the name in its Host header, after exactly one lookup of each type."""
    dns_server.answer_in_turn("rebind.test", "A", [["127.0.0.1"], ["127.0.0.2"]])
    async with outbound_client(_settings(dns_server, allow_private=True), timeout=5) as http:
        response = await http.get(f"http://rebind.test:{web.port}/")
    assert response.status_code == 200 and response.text == "hello"
    assert web.hosts == [f"rebind.test:{web.port}"]
    assert sorted(dns_server.asked("rebind.test")) == ["A", "AAAA"]
    # The next connection looks up again and goes where the new answer says: nothing listens.
    async with outbound_client(_settings(dns_server, allow_private=True), timeout=5) as http:
        with pytest.raises(httpx.ConnectError):
            await http.get(f"http://rebind.test:{web.port}/")
    assert web.hosts == [f"rebind.test:{web.port}"]


async def test_a_name_that_does_not_resolve_is_a_connect_error(dns_server: DNSServer) -> None:
    async with outbound_client(_settings(dns_server, allow_private=False), timeout=5) as http:
        with pytest.raises(httpx.ConnectError, match=r"nowhere\.test has no address"):
            await http.get("http://nowhere.test/")


async def test_literal_addresses_are_checked_without_dns(
    dns_server: DNSServer, web: _Server
) -> None:
    async with outbound_client(_settings(dns_server, allow_private=False), timeout=5) as http:
        with pytest.raises(TargetRefused, match=SETTING):
            await http.get(f"http://127.1:{web.port}/")
    async with outbound_client(_settings(dns_server, allow_private=True), timeout=5) as http:
        assert (await http.get(f"http://127.1:{web.port}/")).status_code == 200
    assert dns_server.queries == []


async def test_tls_verifies_the_name_while_connecting_to_the_checked_address(
    dns_server: DNSServer,
) -> None:
    """Pinning connects to an IP address, yet SNI and the certificate check use the name."""
    authority = trustme.CA()
    client_context = ssl.create_default_context()
    authority.configure_trust(client_context)
    dns_server.records["secure.test"] = {"A": ["127.0.0.1"]}
    dns_server.records["other.test"] = {"A": ["127.0.0.1"]}
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("secure.test").configure_cert(server_context)
    server = _Server(server_context)
    try:
        settings = _settings(dns_server, allow_private=True)
        async with outbound_client(settings, timeout=5, verify=client_context) as http:
            response = await http.get(f"https://secure.test:{server.port}/")
            assert response.status_code == 200
            # The certificate is for secure.test: reached as other.test, verification fails.
            with pytest.raises(httpx.ConnectError, match="certificate"):
                await http.get(f"https://other.test:{server.port}/")
        assert server.server_names[0] == "secure.test"
        assert server.hosts == [f"secure.test:{server.port}"]
    finally:
        server.stop()


async def test_every_client_verifies_with_one_context_built_once(dns_server: DNSServer) -> None:
    """By default a client trusts certifi's authorities only, through one TLS context per
    process (building one cost 28-40 ms of CPU: a webhook sender's start, an MCP server's run)."""
    authority = trustme.CA()
    dns_server.records["secure.test"] = {"A": ["127.0.0.1"]}
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("secure.test").configure_cert(server_context)
    server = _Server(server_context)
    contexts = []
    try:
        for _ in range(2):
            settings = _settings(dns_server, allow_private=True)
            async with outbound_client(settings, timeout=5) as http:
                with pytest.raises(httpx.ConnectError, match="certificate"):
                    await http.get(f"https://secure.test:{server.port}/")
                contexts.append(http._transport._pool._ssl_context)  # type: ignore[attr-defined]
    finally:
        server.stop()
    assert contexts[0] is contexts[1]
    assert contexts[0].verify_mode == ssl.CERT_REQUIRED


async def test_the_system_resolver_is_used_without_nameservers(web: _Server) -> None:
    resolver = Resolver([], timeout=5)
    assert ipaddress.ip_address("127.0.0.1") in await resolver.addresses("localhost")
    settings = Settings(_env_file=None, allow_private_targets=True)
    async with outbound_client(settings, timeout=5) as http:
        assert (await http.get(f"http://localhost:{web.port}/")).status_code == 200
