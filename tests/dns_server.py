"""A DNS server on loopback for the tests, answering from records the test controls.

Written with dnspython's message classes (never atrium's code), it runs in a thread of its own,
so it answers whatever the test's event loop is doing. Point atrium at it with
`dns_nameservers=[server.address]`.

    server.records["hook.test"] = {"A": ["127.0.0.1"], "TXT": ["token"]}
    server.records["www.hook.test"] = {"CNAME": ["hook.test"]}
    server.answer_in_turn("flip.test", "A", [["127.0.0.1"], ["127.0.0.2"]])

An unknown name is NXDOMAIN; a known name without records of the type asked is an empty answer;
a name in `failing` is SERVFAIL (what a resolver answers when the name's servers are broken).
A CNAME is followed within the records, as a recursive server does. Every answer has TTL 0.
`queries` lists each question received, `(name, type)`.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset
import pytest

Records = dict[str, dict[str, list[str]]]


class DNSServer:
    def __init__(self) -> None:
        self.records: Records = {}
        self.queries: list[tuple[str, str]] = []
        self.failing: set[str] = set()
        self._turns: dict[tuple[str, str], list[list[str]]] = {}
        self._lock = threading.Lock()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.1)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def address(self) -> str:
        host, port = self._socket.getsockname()
        return f"{host}:{port}"

    def answer_in_turn(self, name: str, kind: str, answers: list[list[str]]) -> None:
        """Successive queries get successive answers; the last one repeats."""
        with self._lock:
            self._turns[(name, kind)] = list(answers)
            self.records.setdefault(name, {})[kind] = answers[0]

    def reset(self) -> None:
        """Forget every record, queued answer and query: a module's tests share one server
        (its address is in their apps' settings, so they share one app) and each starts empty."""
        with self._lock:
            self.records.clear()
            self.queries.clear()
            self.failing.clear()
            self._turns.clear()

    def asked(self, name: str) -> list[str]:
        with self._lock:
            return [kind for asked, kind in self.queries if asked == name]

    def start(self) -> DNSServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()
        self._socket.close()

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                wire, client = self._socket.recvfrom(4096)
            except TimeoutError:
                continue
            try:
                reply = self._reply(dns.message.from_wire(wire))
            except Exception:  # a malformed query gets no answer, as from a real server
                continue
            self._socket.sendto(reply.to_wire(), client)

    def _values(self, name: str, kind: str) -> list[str] | None:
        turns = self._turns.get((name, kind))
        if turns:
            values = turns.pop(0) if len(turns) > 1 else turns[0]
            self.records.setdefault(name, {})[kind] = values
        return self.records.get(name, {}).get(kind)

    def _reply(self, query: dns.message.Message) -> dns.message.Message:
        reply = dns.message.make_response(query)
        reply.flags |= dns.flags.RA
        question = query.question[0]
        name = question.name.to_text(omit_final_dot=True).lower()
        kind = dns.rdatatype.to_text(question.rdtype)
        with self._lock:
            self.queries.append((name, kind))
            if name in self.failing:
                reply.set_rcode(dns.rcode.SERVFAIL)
                return reply
            if name not in self.records:
                reply.set_rcode(dns.rcode.NXDOMAIN)
                return reply
            for _ in range(8):  # follow CNAMEs, as a recursive server does
                alias = self.records.get(name, {}).get("CNAME")
                if kind == "CNAME" or not alias:
                    break
                targets = [target.rstrip(".") + "." for target in alias]
                reply.answer.append(dns.rrset.from_text_list(name + ".", 0, "IN", "CNAME", targets))
                name = alias[0].rstrip(".").lower()
            values = self._values(name, kind)
        if values:
            if kind == "TXT":
                values = ['"' + value.replace('"', '\\"') + '"' for value in values]
            reply.answer.append(dns.rrset.from_text_list(name + ".", 0, "IN", kind, values))
        return reply


@pytest.fixture
def dns_server() -> Iterator[DNSServer]:
    """A server of the test's own: nothing an earlier test's app still does (a webhook's
    retries) reaches it."""
    server = DNSServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def module_dns() -> Iterator[DNSServer]:
    server = DNSServer().start()
    yield server
    server.stop()


@pytest.fixture
def shared_dns(module_dns: DNSServer) -> DNSServer:
    """The module's DNS server, emptied for each test. One server, not one per test: its address
    is in the app's settings, so a server per test meant an app started per test (tests/serving's
    verification module took 20 s of CPU, 9 s with one server; `-n 0`, calibration ~17 ms).
    A module that uses it imports both: `from tests.dns_server import module_dns, shared_dns`."""
    module_dns.reset()
    return module_dns
