"""A run's memory blocks: read when it executes (so an edit made since it was queued, by the
API or by another agent's tool, is seen), rendered into its instructions, and recorded on the
run with their versions (`runs.memory_blocks`, docs/decisions/0060-memory-blocks.md)."""

from __future__ import annotations

from atrium.agents.config import AgentConfig, stored_config
from atrium.db.engine import Database
from atrium.memory.blocks import rendering, service
from atrium.runs import repository
from atrium.runs.lifecycle.moves import ClaimedRun
from atrium.worker.recorder import LeaseLost


async def with_blocks(db: Database, *, claim: ClaimedRun, owner: str) -> AgentConfig:
    """The run's config with its blocks rendered into `instructions`; the config itself when
    its agent lists none. Raises `LeaseLost` when the run is no longer this worker's."""
    labels = claim.config.get("blocks") or []
    if not labels:
        return claim.config
    async with db.transaction() as session:
        blocks = await service.blocks_of(session, account_id=claim.account_id, labels=labels)
        recorded = await repository.record_memory_blocks(
            session,
            run_id=claim.run_id,
            owner=owner,
            seen=list(rendering.seen(blocks)),
        )
    if not recorded:
        raise LeaseLost(claim.run_id)
    config = stored_config(claim.config)
    config["instructions"] = rendering.render(claim.config.get("instructions") or "", blocks)
    return config
