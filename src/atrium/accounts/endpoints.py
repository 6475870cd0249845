"""`GET /v1/account`: who am I. Lets clients and the dashboard check a key before using it."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from atrium.http.deps import CurrentPrincipal

router = APIRouter(tags=["account"])


class AccountOut(BaseModel):
    id: int
    name: str


class KeyOut(BaseModel):
    id: int
    tier: str


class WhoAmI(BaseModel):
    account: AccountOut
    key: KeyOut


@router.get("/account")
async def get_account(principal: CurrentPrincipal) -> WhoAmI:
    """The account and key tier that the presented API key acts for."""
    return WhoAmI(
        account=AccountOut(id=principal.account_id, name=principal.account_name),
        key=KeyOut(id=principal.key_id, tier=principal.tier),
    )
