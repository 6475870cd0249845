"""`config.blocks`: the labels of the memory blocks rendered into every run's instructions
(docs/decisions/0060-memory-blocks.md). A label need not name a block yet: one without a block
renders nothing, so an agent and its blocks can be made in either order.

Every problem is a 400 naming the entry (`config.blocks[2]`), as `config.memory`'s do."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field, PlainValidator

from atrium.agents.memory_config import BLOCK_LABEL_PATTERN, MAX_BLOCKS
from atrium.errors import InvalidParameter

_LABEL = re.compile(BLOCK_LABEL_PATTERN)
_WHERE = "config.blocks"


def parse_blocks(value: object) -> list[str]:
    """`config.blocks` as a client sent it, or an `InvalidParameter` naming the entry."""
    if not isinstance(value, list) or len(value) > MAX_BLOCKS:
        raise InvalidParameter(_WHERE, f"{_WHERE} must be a list of at most {MAX_BLOCKS} labels")
    for index, label in enumerate(value):
        where = f"{_WHERE}[{index}]"
        if not isinstance(label, str) or not _LABEL.fullmatch(label):
            raise InvalidParameter(where, f"{where} must be 1-64 of A-Z a-z 0-9 _ . -")
        if label in value[:index]:
            raise InvalidParameter(where, f"{where} repeats {label!r}")
    return [str(label) for label in value]


BlocksField = Annotated[
    Any,
    PlainValidator(
        parse_blocks,
        json_schema_input_type=Annotated[
            list[Annotated[str, Field(pattern=BLOCK_LABEL_PATTERN)]],
            Field(max_length=MAX_BLOCKS, json_schema_extra={"uniqueItems": True}),
        ],
    ),
]
"""`config.blocks` in a request body."""
