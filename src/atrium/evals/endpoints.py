"""`/v1/evals`: store, list, read and delete an account's evals. The cases are run and scored
by the client (`atrium eval`, `client.evals.run`); this stores the result."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, status

from atrium.errors import InvalidParameter
from atrium.evals import presenters, service
from atrium.evals.errors import EvalNotFound, EvalRefused
from atrium.evals.schemas import EvalDeleted, EvalIn, EvalList, EvalOut
from atrium.http.deps import CurrentPrincipal, SessionDep
from atrium.http.openapi import error_responses
from atrium.kit.cursor import CursorQuery

router = APIRouter(prefix="/evals", tags=["evals"])
EvalId = Annotated[str, Path(description="The eval's id (`eval_…`).", max_length=40)]
_NOT_FOUND = error_responses(EvalNotFound)


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=EvalOut,
    responses=error_responses(EvalRefused, InvalidParameter),
)
async def store_eval(body: EvalIn, session: SessionDep, principal: CurrentPrincipal) -> EvalOut:
    """Store an eval's results. Every `run_id` must be a finished run of the account on the
    result's agent; credits, latency and agent version are taken from the stored runs. A wrong
    field is a 400 naming it (`cases.2.results.0.run_id`) and nothing is stored."""
    row = await service.store(session, account_id=principal.account_id, body=body)
    return presenters.eval_out(row)


@router.get("", response_model=EvalList)
async def list_evals(
    session: SessionDep,
    principal: CurrentPrincipal,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: CursorQuery = None,
) -> EvalList:
    """The account's evals, newest first, with each agent's totals; follow `next_cursor`
    while `has_more`."""
    page = await service.list_evals(
        session, account_id=principal.account_id, limit=limit, cursor=cursor
    )
    return EvalList(
        data=[presenters.eval_summary(row) for row in page.rows],
        has_more=page.next_cursor is not None,
        next_cursor=page.next_cursor,
    )


@router.get("/{eval_id}", response_model=EvalOut, responses=_NOT_FOUND)
async def get_eval(eval_id: EvalId, session: SessionDep, principal: CurrentPrincipal) -> EvalOut:
    """The eval: every case's result on every agent, side by side, and each agent's totals."""
    row = await service.get(session, account_id=principal.account_id, eval_id=eval_id)
    return presenters.eval_out(row)


@router.delete("/{eval_id}", response_model=EvalDeleted, responses=_NOT_FOUND)
async def delete_eval(
    eval_id: EvalId, session: SessionDep, principal: CurrentPrincipal
) -> EvalDeleted:
    """Delete the eval. Its runs stay."""
    deleted = await service.delete(session, account_id=principal.account_id, eval_id=eval_id)
    return EvalDeleted(eval_id=deleted)
