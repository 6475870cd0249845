"""Outbound requests (docs/design.md#outbound): only to public addresses, each connection
pinned to the address that was checked.

Two checks, one rule (`public_targets.is_public`: `ipaddress`'s `is_global`, with the embedded
IPv4 address of IPv4-mapped, 6to4 and NAT64 forms judged in its place, and multicast and
site-local refused):

- `public_targets.check_url`, when a URL is registered (a webhook endpoint, a run's
  `webhook_url`, an MCP server): scheme, host, no credentials; a literal address in any
  spelling a resolver accepts (`127.1`, `0x7f000001`, `[::ffff:7f00:1]`) and the `localhost`
  names are judged at once. Other names are not looked up then: where a name points is only
  known when connecting.
- `pinned_client.outbound_client`, for sending: an httpx client whose network backend resolves
  the host itself, refuses the connection if any address it got is not public, and connects to
  one of those very addresses. httpx never resolves the name again, so a DNS answer that
  changes between the check and the connection (DNS rebinding) cannot slip a private address
  in. httpcore hands the original name to `start_tls` separately (`server_hostname`), and the
  request keeps it in its `Host` header: TLS still verifies the certificate of the name.

Names are looked up by `resolver.Resolver` (the verification of served domains uses it too).

`ATRIUM_ALLOW_PRIVATE_TARGETS=true` lifts the address rule (local development, receivers on
your own network); connections are still made to the addresses the backend resolved.
"""
