"""The OpenAPI pattern of `index_page`/`not_found_page` is exactly the server's rule
(`domains.rules.normalize_page_url`): every value the server takes matches it and every value it
refuses does not, so a generated client or a fuzzer never sends a value the document forbids and
sees it taken. Checked against the rule over many generated URL-like values, in Python's regex
dialect and in ECMA 262's (JSON Schema validators; with Node.js when it is installed), and
through HTTP for the values that make the rule's corners."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from atrium.domains.rules import normalize_page_url
from atrium.errors import InvalidParameter
from atrium.kit.wire_schemas import FORM_PAGE_URL

PATTERN = re.compile(FORM_PAGE_URL["pattern"])
PAGES = ("index_page", "not_found_page")

# The corners of the rule: scheme case, the `//`, user parts, ports at their bounds, brackets
# (IPv6 with zones, IPvFuture, brackets in the user part or unbalanced), the length bound,
# padding the server trims and characters it refuses.
CORNERS = [
    "",
    "   ",
    "https://example.com/welcome",
    "  https://example.com/welcome\t",
    "HTTPS://EXAMPLE.COM",
    "hTtP://x",
    "http://x:",
    "http://x:0",
    "http://x:65535",
    "http://x:0000065535",
    "http://x:65536",
    "http://x:8o",
    "http://x:80:80",
    "http://:80",
    "http://user:pass@host",
    "http://a@b@c",
    "http://user@",
    "http://@host",
    "http://",
    "http:///path",
    "http:/host",
    "http:host",
    "ftp://host",
    "https//host",
    "http://host?query#fragment",
    "http://host#a:b",
    "http://[::1]",
    "http://[::1]:8080/x",
    "http://[::1]junk:80",
    "http://[::1]junk:x",
    "http://[fe80::1%25eth0]/",
    "http://[fe80::1%]",
    "http://[fe80::1%a%b]",
    "http://[fe80::1%a@b]",
    "http://[fe80::1%a[b]",
    "http://[1.2.3.4]",
    "http://[::ffff:1.2.3.4]",
    "http://[::ffff:01.2.3.4]",
    "http://[::ffff:256.2.3.4]",
    "http://[1:2:3:4:5:6:7:8]",
    "http://[1:2:3:4:5:6:7:8:9]",
    "http://[1:2:3:4:5:6::7]",
    "http://[1:2:3:4:5:6:7::]",
    "http://[1::2::3]",
    "http://[12345::]",
    "http://[v1.x]",
    "http://[v1.]",
    "http://[V1.x]",
    "http://[vg.x]",
    "http://[",
    "http://]",
    "http://x]",
    "http://]x[::1]",
    "http://x]@[::1]",
    "http://[::1]@host",
    "http://[x]@host",
    "http://u[@h]",
    "http://[]",
    "http://a[b",
    "http://a[]",
    "http://h/caf\u00e9",
    "http://h/\x7f",
    "http://h/a b",
    "http://h\x00",
    "http://h/" + "a" * 2039,
    "http://h/" + "a" * 2040,
    "  http://h/" + "a" * 2039 + "  ",
]

PIECES = [
    *("http", "https", "HTTP", "hTtPs", "ftp", "://", ":", "//", "/", "?", "#", "@", "%"),
    *("[", "]", ".", "v", "0", "1", "80", "65535", "65536", "0065535", "::", "::1"),
    *("fe80::1", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8", "::ffff:", "1.2.3.4", "256.1.1.1"),
    *("01.2.3.4", "v1.x", "vA.", "eth0", "a", "b.c", "x-y", "ffff", "12345", "g"),
    *(" ", "\t", "\u3000", "\x1c", "\u00e9", "\x7f", "\x00", "%25", "~", "\\", '"'),
]
_PRINTABLE = "".join(chr(code) for code in range(0x21, 0x7F))
_scraps = st.sampled_from(PIECES) | st.text(alphabet=_PRINTABLE, max_size=3)
_PREFIXES = ["http://", "https://", "HTTP://", "http://[", "http:/", "http:", " ", ""]
URL_LIKE = st.tuples(
    st.sampled_from(_PREFIXES),
    st.lists(_scraps, max_size=12).map("".join),
).map("".join)


def server_takes(value: str) -> bool:
    try:
        normalize_page_url("index_page", value)
    except InvalidParameter:
        return False
    return True


def published(value: str) -> bool:
    return PATTERN.search(value) is not None


@pytest.mark.parametrize("value", CORNERS)
def test_the_pattern_is_the_rule_at_its_corners(value: str) -> None:
    assert published(value) is server_takes(value), value


# Hypothesis for its shrinking and its bias to edge cases, but few examples: drawing one costs it
# ~2 ms, checking one ~0.02 ms, so the bulk of the values come from the same shapes drawn by hand
# (docs/decisions/0028-test-suite-cost.md).
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(URL_LIKE)
@example("http://[::1]%")
def test_the_pattern_is_the_rule_for_generated_values(value: str) -> None:
    assert published(value) is server_takes(value), value


def url_like(draw: random.Random) -> str:
    """A value of URL_LIKE's shape: a prefix, then up to 12 pieces or scraps of printable ASCII."""
    scraps = [
        draw.choice(PIECES)
        if draw.random() < 0.5
        else "".join(draw.choice(_PRINTABLE) for _ in range(draw.randrange(4)))
        for _ in range(draw.randrange(13))
    ]
    return draw.choice(_PREFIXES) + "".join(scraps)


def test_the_pattern_is_the_rule_for_many_drawn_values() -> None:
    seed = random.randrange(2**32)  # a new one each run, named in a failure to repeat it
    draw = random.Random(seed)
    for _ in range(30_000):
        value = url_like(draw)
        assert published(value) is server_takes(value), (seed, value)


def test_ecma_reads_the_pattern_as_python_does() -> None:
    """JSON Schema validators read `pattern` as ECMA 262 regexes: Node.js's verdicts on the
    corners and on values drawn from the pattern's neighbourhood are Python's."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node binary: the ECMA dialect is not checked here")
    draw = random.Random(0)
    values = CORNERS + [
        draw.choice(["http://", "HTTPS://", "http://[", ""])
        + "".join(draw.choice(PIECES) for _ in range(draw.randrange(12)))
        for _ in range(2000)
    ]
    script = (
        "const [pattern, values] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const re = new RegExp(pattern);"
        "process.stdout.write(JSON.stringify(values.map((v) => re.test(v))));"
    )
    done = subprocess.run(
        [node, "-e", script],
        input=json.dumps([FORM_PAGE_URL["pattern"], values]),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    verdicts = json.loads(done.stdout)
    assert [v for v, ecma in zip(values, verdicts, strict=True) if ecma != published(v)] == []


def _page_patterns(document: dict[str, Any]) -> set[str]:
    found = set()
    for path in ("/api/v1/domains", "/api/v1/domains/{id}"):
        for operation in document["paths"][path].values():
            for media in operation.get("requestBody", {}).get("content", {}).values():
                for page in PAGES:
                    found.add(media["schema"]["properties"][page]["pattern"])
    return found


async def test_the_document_publishes_the_pattern_the_server_follows(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    document = (await client.get("/openapi.json")).json()
    assert _page_patterns(document) == {FORM_PAGE_URL["pattern"]}
    created = await client.post("/api/v1/domains", data={"name": "pages.test"}, headers=auth)
    path = f"/api/v1/domains/{created.json()['data']['id']}"
    for value in CORNERS:
        response = await client.put(path, data={"not_found_page": value}, headers=auth)
        assert response.status_code == (200 if published(value) else 400), (value, response.text)
        if response.status_code == 200:
            stored = response.json()["data"]["not_found_page"]
            assert stored == (value.strip() or None)
