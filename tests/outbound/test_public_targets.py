"""Outbound targets (docs/design.md#outbound): which addresses are public and the check of a
URL when it is registered (pure checks: the public addresses below are only data, never
contacted; the connections are `test_pinned_client.py`'s)."""

from __future__ import annotations

import ipaddress

import pytest

from atrium.outbound.public_targets import TargetRefused, check_url, is_public
from atrium.settings import Settings

SETTING = "ATRIUM_ALLOW_PRIVATE_TARGETS"

# --- the address rule --------------------------------------------------------------------------

REFUSED = [
    "100.100.100.200",  # a cloud's metadata service, in the shared address space 100.64/10
    "100.64.0.1",
    "::ffff:100.100.100.200",  # IPv4-mapped: Python 3.11 calls it global
    "::ffff:6464:64c8",
    "0.0.0.0",
    "127.0.0.1",
    "10.1.2.3",
    "169.254.169.254",
    "192.168.1.1",
    "172.16.0.1",
    "198.18.0.1",
    "255.255.255.255",
    "224.0.0.1",
    "::1",
    "::",
    "::127.0.0.1",  # IPv4-compatible (deprecated)
    "fe80::1",
    "fec0::1",  # site-local: Python calls it global
    "fd00::1",
    "ff0e::1",  # global-scope multicast
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b:1::1",  # local-use NAT64
    "2002:a00:1::",  # 6to4 of 10.0.0.1
    "2001:db8::1",
]


@pytest.mark.parametrize("text", REFUSED)
def test_addresses_that_are_not_globally_routable_are_not_public(text: str) -> None:
    assert not is_public(ipaddress.ip_address(text))


@pytest.mark.parametrize(
    "text", ["93.184.216.34", "2606:4700::1", "::ffff:93.184.216.34", "64:ff9b::5db8:d822"]
)
def test_global_unicast_addresses_are_public(text: str) -> None:
    assert is_public(ipaddress.ip_address(text))


# --- registration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://100.100.100.200/latest/meta-data/",
        "http://[::ffff:100.100.100.200]/",
        "http://[::ffff:6464:64c8]/",
        "http://[fec0::1]/",
        "http://100.64.0.1/",
        "http://0.0.0.0:8080/",
        "http://127.1/",
        "http://0x7f.1/",
        "http://0x7f000001/",
        "http://2130706433/",
        "http://017700000001/",
        "http://[::127.0.0.1]/",
        "http://[64:ff9b::a00:1]/",
        "http://[fe80::1%25eth0]/",
        "https://LOCALHOST./",
        "http://app.localhost/",
    ],
)
def test_registration_refuses_every_non_public_literal_and_names_the_setting(url: str) -> None:
    with pytest.raises(TargetRefused, match=SETTING):
        check_url(url, allow_private=False)
    assert check_url(url, allow_private=True) == url


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com/x",
        "https://hooks_1.example.com./x",
        "https://bücher.example/x",
        "https://xn--bcher-kva.example/x",
        "https://hooks.xn--bcher-kva.example/x",
        "http://93.184.216.34:8080/",
        "http://[2606:4700::1]/",
    ],
)
def test_registration_takes_names_and_public_literals(url: str) -> None:
    assert check_url(url, allow_private=False) == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://hooks.example.com/", "http or https"),
        ("http:///x", "host"),
        ("https://user:pw@hooks.example.com/", "credentials"),
        ("https://hooks.example.com/a b", "spaces"),
        ("https://hooks.example.com:99999/", "valid URL"),
        ("https://hooks.example*/", r"valid URL \(host\)"),
        ("https://hooks..example.com/", r"valid URL"),
        # Malformed IDNA: httpx decodes a host that starts with an A-label, and raises idna's
        # own error; one further on is judged the same way.
        ("http://xn--/x", r"valid URL \(host\)"),
        ("http://XN--/x", r"valid URL \(host\)"),
        ("http://xn--a.xn--/", r"valid URL \(host\)"),
        ("http://xn--zz.example.com/", r"valid URL \(host\)"),
        ("http://xn--mnchen-3ya.a_b.example/", r"valid URL \(host\)"),
        ("http://hooks.xn--zz.example.com/", r"valid URL \(host\)"),
        ("http://" + "a" * 64 + ".example.com/", r"valid URL \(host\)"),
    ],
)
def test_registration_refuses_malformed_urls(url: str, reason: str) -> None:
    with pytest.raises(TargetRefused, match=reason):
        check_url(url, allow_private=True)


@pytest.mark.parametrize(
    "variable", ["ATRIUM_ALLOW_PRIVATE_TARGETS", "ATRIUM_WEBHOOK_ALLOW_PRIVATE_TARGETS"]
)
def test_the_setting_and_its_older_name(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    assert Settings(_env_file=None).allow_private_targets is False
    monkeypatch.setenv(variable, "true")
    assert Settings(_env_file=None).allow_private_targets is True
