"""How blocks appear in a run's instructions, and what the run records of them.

The format (docs/guide/memory.md#8-blocks): the agent's instructions, a blank line, then

    <memory_blocks>
    <block label="persona" version="3" chars="41" limit="2000">
    …the text, verbatim…
    </block>
    </memory_blocks>

one `<block>` per attached block that exists, in the order of `config.blocks`. The version,
size and limit are shown so that a model editing a block knows how much room is left.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from atrium.db.models import MemoryBlock


class BlockSeen(TypedDict):
    """A block version a run's instructions were rendered from (`runs.memory_blocks`)."""

    label: str
    block_id: str
    version: int


def render(instructions: str, blocks: Sequence[MemoryBlock]) -> str:
    """`instructions` followed by the blocks; unchanged when there are none."""
    if not blocks:
        return instructions
    parts = [
        f'<block label="{block.label}" version="{block.version}" chars="{len(block.value)}" '
        f'limit="{block.char_limit}">\n{block.value}\n</block>'
        for block in blocks
    ]
    rendered = "<memory_blocks>\n" + "\n".join(parts) + "\n</memory_blocks>"
    return f"{instructions}\n\n{rendered}" if instructions else rendered


def seen(blocks: Sequence[MemoryBlock]) -> list[BlockSeen]:
    return [
        BlockSeen(label=block.label, block_id=block.id, version=block.version) for block in blocks
    ]
