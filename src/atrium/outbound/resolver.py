"""DNS lookups: the system's resolver, or the servers named by `ATRIUM_DNS_NAMESERVERS`.

One `Resolver` serves the outbound check (`outbound.pinned_client`: which addresses a host
has) and the verification of served domains (TXT records, where a name points). With no servers
configured,
addresses come from the system (`getaddrinfo`: `/etc/hosts`, nsswitch, the resolver the host
uses) and TXT records from dnspython reading `/etc/resolv.conf`. With servers configured, every
lookup goes to them through dnspython; tests point it at a DNS server of their own on loopback.
Nothing is cached here: each lookup asks again (the outbound check connects to the very
address it checked, so a later answer can never be used unchecked).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Sequence

import dns.asyncresolver
import dns.exception
import dns.nameserver
import dns.resolver

from atrium.settings import Settings, dns_server_address

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class LookupFailed(Exception):
    """The name could not be resolved (no such name, no answer, no server answered in time)."""


class LookupTimedOut(LookupFailed):
    """No server answered within the deadline: the name may well exist (a later try may say)."""


def parse_address(text: str) -> IPAddress | None:
    """An address as a resolver reports it (`fe80::1%eth0` keeps its zone); None if not one."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


class Resolver:
    """Address and TXT lookups with one deadline per lookup (`ATRIUM_DNS_TIMEOUT_SECONDS`)."""

    def __init__(self, nameservers: Sequence[str] = (), *, timeout: float = 5.0) -> None:
        self.timeout = timeout
        self._servers = [dns_server_address(entry) for entry in nameservers]
        self._dns: dns.asyncresolver.Resolver | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Resolver:
        return cls(settings.dns_nameservers, timeout=settings.dns_timeout_seconds)

    def _dnspython(self) -> dns.asyncresolver.Resolver:
        # Made on first use: reading the system configuration fails on a host without one, and
        # a deployment that never verifies a domain by TXT must not fail for that.
        if self._dns is None:
            if self._servers:
                resolver = dns.asyncresolver.Resolver(configure=False)
                resolver.nameservers = [
                    dns.nameserver.Do53Nameserver(host, port) for host, port in self._servers
                ]
            else:
                try:
                    resolver = dns.asyncresolver.Resolver()
                except dns.resolver.NoResolverConfiguration as exc:
                    raise LookupFailed("the system has no DNS configuration") from exc
            resolver.lifetime = self.timeout
            self._dns = resolver
        return self._dns

    async def addresses(self, host: str) -> list[IPAddress]:
        """Every address of `host` (A and AAAA, CNAMEs followed), in the resolver's order."""
        if self._servers:
            answers = await asyncio.gather(self._records(host, "A"), self._records(host, "AAAA"))
            found = [parse_address(text) for answer in answers for text in answer]
        else:
            found = await self._system_addresses(host)
        unique = list(dict.fromkeys(address for address in found if address is not None))
        if not unique:
            raise LookupFailed(f"{host} has no address")
        return unique

    async def txt(self, name: str) -> list[str]:
        """The TXT strings of `name` (each record's strings joined); [] when it has none."""
        return await self._records(name, "TXT")

    async def _system_addresses(self, host: str) -> list[IPAddress | None]:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.timeout):
                infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except TimeoutError as exc:
            raise LookupTimedOut(f"looking up {host} took longer than {self.timeout:g} s") from exc
        except (OSError, UnicodeError) as exc:
            raise LookupFailed(f"{host} could not be resolved ({exc})") from exc
        return [parse_address(str(info[4][0])) for info in infos]

    async def _records(self, name: str, kind: str) -> list[str]:
        try:
            answer = await self._dnspython().resolve(name, kind, raise_on_no_answer=False)
        except dns.resolver.NXDOMAIN:
            return []
        except dns.exception.Timeout as exc:
            raise LookupTimedOut(f"looking up {name} took longer than {self.timeout:g} s") from exc
        except dns.exception.DNSException as exc:
            raise LookupFailed(f"{name} could not be resolved ({exc})") from exc
        if answer.rrset is None:
            return []
        if kind == "TXT":
            return [b"".join(record.strings).decode("utf-8", "replace") for record in answer.rrset]
        return [record.to_text() for record in answer.rrset]
