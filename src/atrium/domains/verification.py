"""Proof that a domain's owner controls its DNS, before atrium serves the name.

Without it, any account could store a host name that atrium also answers under (an alias of
the deployment, a customer's name already pointed at it) and take over its traffic. Two proofs:

- TXT (always): `_atrium-challenge.<name>` has a TXT record whose text is the domain's own
  token. Tokens are random per stored domain, so a record published for one account never
  verifies another account's claim on the name.
- Address (when `ATRIUM_DOMAIN_VERIFY_TARGET` names the deployment): one of the name's A/AAAA
  addresses, found directly or through CNAMEs, is an address of the deployment. Weaker: it
  shows the name points here, not who asked, so the first account to claim such a name wins.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum

from atrium.outbound.resolver import (
    IPAddress,
    LookupFailed,
    LookupTimedOut,
    Resolver,
    parse_address,
)

CHALLENGE_LABEL = "_atrium-challenge"


class VerificationError(StrEnum):
    """Why the last check did not verify a domain (`verification.last_error` on the wire)."""

    TXT_MISSING = "txt_missing"
    """No TXT record at the challenge name (the name does not exist, or has no TXT)."""
    TXT_MISMATCH = "txt_mismatch"
    """TXT records at the challenge name, but none is the token."""
    ADDRESS_MISMATCH = "address_mismatch"
    """The name has addresses, none of them the deployment's (`ATRIUM_DOMAIN_VERIFY_TARGET`)."""
    DNS_TIMEOUT = "dns_timeout"
    """No DNS server answered within `ATRIUM_DNS_TIMEOUT_SECONDS`."""
    DNS_ERROR = "dns_error"
    """DNS answered with a failure (server failure, refusal, no usable configuration)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one check of DNS found: `error` is None when DNS proves control of the name."""

    error: VerificationError | None

    @property
    def verified(self) -> bool:
        return self.error is None


class _Pointing(Enum):
    """Where a name's addresses lead, for the address proof."""

    HERE = "here"
    ELSEWHERE = "elsewhere"
    NOWHERE = "nowhere"  # no address at all (or none could be found)
    UNKNOWN = "unknown"  # a lookup timed out


def txt_name(name: str) -> str:
    """Where the owner publishes the token."""
    return f"{CHALLENGE_LABEL}.{name}"


async def _addresses(resolver: Resolver, host: str) -> set[IPAddress] | None:
    """The addresses of `host` (an IP literal is its own); None when the lookup timed out."""
    literal = parse_address(host)
    if literal is not None:
        return {literal}
    try:
        return set(await resolver.addresses(host))
    except LookupTimedOut:
        return None
    except LookupFailed:
        return set()


async def _txt_error(resolver: Resolver, *, name: str, token: str) -> VerificationError | None:
    try:
        records = await resolver.txt(txt_name(name))
    except LookupTimedOut:
        return VerificationError.DNS_TIMEOUT
    except LookupFailed:
        return VerificationError.DNS_ERROR
    if not records:
        return VerificationError.TXT_MISSING
    if any(record.strip() == token for record in records):
        return None
    return VerificationError.TXT_MISMATCH


async def _pointing(resolver: Resolver, *, name: str, targets: Sequence[str]) -> _Pointing:
    """Whether some address of `name` is an address of one of `targets`."""
    found = await asyncio.gather(
        _addresses(resolver, name), *(_addresses(resolver, t) for t in targets)
    )
    own: set[IPAddress] = set().union(*(addresses or set() for addresses in found[1:]))
    theirs = found[0]
    if theirs is None:
        return _Pointing.UNKNOWN
    if theirs & own:
        return _Pointing.HERE
    if any(addresses is None for addresses in found[1:]):
        return _Pointing.UNKNOWN  # a target's addresses are not all known
    return _Pointing.ELSEWHERE if theirs else _Pointing.NOWHERE


def _error(txt: VerificationError | None, pointing: _Pointing) -> VerificationError | None:
    """The one reason to report, the most useful first: a record published with the wrong
    value, a name pointed elsewhere, then a lookup that failed, else the missing record."""
    if txt is None or pointing is _Pointing.HERE:
        return None
    if txt is VerificationError.TXT_MISMATCH:
        return txt
    if pointing is _Pointing.ELSEWHERE:
        return VerificationError.ADDRESS_MISMATCH
    if pointing is _Pointing.UNKNOWN:
        return VerificationError.DNS_TIMEOUT
    return txt


async def check(resolver: Resolver, *, name: str, token: str, targets: Sequence[str]) -> Outcome:
    """Whether DNS now proves control of `name`, by either proof, and if not, why not. Both
    proofs are looked up at once: a check takes one `ATRIUM_DNS_TIMEOUT_SECONDS` at most."""
    if not targets:
        return Outcome(await _txt_error(resolver, name=name, token=token))
    txt, pointing = await asyncio.gather(
        _txt_error(resolver, name=name, token=token),
        _pointing(resolver, name=name, targets=targets),
    )
    return Outcome(_error(txt, pointing))
