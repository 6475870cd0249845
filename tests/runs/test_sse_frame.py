"""atrium writes its SSE frames itself (once per event, however many streams follow the run):
the bytes are the ones sse-starlette's own encoding gives, so clients see no difference."""

from __future__ import annotations

import json

from sse_starlette.event import ServerSentEvent

from atrium.runs.events.stream import access_ended_message, sse_frame


def test_a_frame_is_sse_starlettes_encoding_and_is_encoded_once() -> None:
    data = {"run_id": "run_1", "seq": 7, "text": "héllo\nline\u2028two\r"}
    message = {"id": 7, "event": "message.delta", "data": data}
    frame = sse_frame(message)
    expected = ServerSentEvent(
        data=json.dumps(data, separators=(",", ":")), event="message.delta", id="7"
    ).encode()
    assert frame == expected
    assert sse_frame(message) is frame  # kept on the shared live message


def test_a_frame_without_an_id_has_no_id_line() -> None:
    message = access_ended_message()
    expected = ServerSentEvent(
        data=json.dumps(message["data"], separators=(",", ":")), event="error"
    ).encode()
    assert sse_frame(message) == expected
