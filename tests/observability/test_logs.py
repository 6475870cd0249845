"""Log lines cannot be forged or garbled from outside: every record of an atrium
process has its control characters escaped, whichever logger wrote it."""

from __future__ import annotations

import logging

import httpx
import pytest

# Every character that could end, forge or garble a log line.
CONTROL = {chr(code) for code in [*range(0x20), *range(0x7F, 0xA0)]} | {"\u2028", "\u2029"}


async def test_any_record_of_the_app_process_is_escaped(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Any logger, any argument (the app installs the escaping when it is created; `client`
    creates one); string arguments are escaped in place, so the record keeps its shape."""
    caplog.set_level(logging.INFO)
    logging.getLogger("somewhere.else").warning("path %s, status %d", "/a\r\nb\x1b[2J", 200)
    logging.getLogger("somewhere.else").warning(ValueError("not\na string"))
    first, second = [record for record in caplog.records if record.name == "somewhere.else"]
    assert first.getMessage() == "path /a\\r\\nb\\x1b[2J, status 200"
    assert first.args == ("/a\\r\\nb\\x1b[2J", 200)
    assert second.getMessage() == "not\\na string"
    assert not CONTROL & set(caplog.text.replace("\n", ""))
