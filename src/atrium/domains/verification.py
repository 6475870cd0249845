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

from atrium.kit.dns import IPAddress, LookupFailed, Resolver, parse_address

CHALLENGE_LABEL = "_atrium-challenge"


def txt_name(name: str) -> str:
    """Where the owner publishes the token."""
    return f"{CHALLENGE_LABEL}.{name}"


async def _addresses(resolver: Resolver, host: str) -> set[IPAddress]:
    literal = parse_address(host)
    if literal is not None:
        return {literal}
    try:
        return set(await resolver.addresses(host))
    except LookupFailed:
        return set()


async def has_txt_token(resolver: Resolver, *, name: str, token: str) -> bool:
    try:
        records = await resolver.txt(txt_name(name))
    except LookupFailed:
        return False
    return any(record.strip() == token for record in records)


async def points_at(resolver: Resolver, *, name: str, targets: Sequence[str]) -> bool:
    """True when some address of `name` is an address of one of `targets`."""
    if not targets:
        return False
    found = await asyncio.gather(
        _addresses(resolver, name), *(_addresses(resolver, t) for t in targets)
    )
    own: set[IPAddress] = set().union(*found[1:])
    return bool(found[0] & own)


async def is_proven(resolver: Resolver, *, name: str, token: str, targets: Sequence[str]) -> bool:
    """Whether DNS now proves control of `name`, by either proof."""
    return await has_txt_token(resolver, name=name, token=token) or await points_at(
        resolver, name=name, targets=targets
    )
