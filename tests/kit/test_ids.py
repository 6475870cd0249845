"""Every id `new_id` makes passes the id rule; what cannot name a record is refused before a
query (a NUL or a surrogate would make PostgreSQL fail instead of answering "not found")."""

from __future__ import annotations

import pytest

from atrium.kit.ids import MAX_ID_LENGTH, known_id, looks_like_id, new_id


def test_made_ids_look_like_ids() -> None:
    for prefix in ("run", "thr", "agt", "wh", "file"):
        made = new_id(prefix)
        assert made.startswith(f"{prefix}_")
        assert looks_like_id(made)


@pytest.mark.parametrize(
    "value", ["", "a" * (MAX_ID_LENGTH + 1), "run_\x00", "run_\ud800", "run/1", "run 1", "é"]
)
def test_what_cannot_name_a_record(value: str) -> None:
    assert not looks_like_id(value)
    with pytest.raises(LookupError) as raised:
        known_id(value, LookupError)
    assert raised.value.args == (value,)


def test_a_plausible_id_is_returned() -> None:
    assert known_id("a" * MAX_ID_LENGTH, LookupError) == "a" * MAX_ID_LENGTH
