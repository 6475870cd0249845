"""Rules for spaces: name 1-32 characters unique in the account, color an integer 1-6."""

from __future__ import annotations

import re

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import Space
from atrium.errors import InvalidParameter
from atrium.kit.time import utcnow
from atrium.phpshort.form_body import Fields, text_field
from atrium.phpshort.listing import ListParams, has_control_characters
from atrium.spaces import repository
from atrium.spaces.errors import SpaceNameTaken, SpaceNotFound

MAX_NAME_LENGTH = 32
COLORS = range(1, 7)
DEFAULT_COLOR = 1
_COLOR_TEXT = re.compile(r"[0-9]{1,3}")


def _name(fields: Fields) -> str | None:
    """The trimmed name, None when absent; present but empty (or too long) is a 400."""
    if "name" not in fields:
        return None
    name = text_field(fields, "name")
    if not name:
        raise InvalidParameter("name", "name is required")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidParameter("name", f"name must be at most {MAX_NAME_LENGTH} characters")
    if has_control_characters(name):
        raise InvalidParameter("name", "name must not contain control characters")
    return name


def _color(fields: Fields) -> int | None:
    """An integer 1-6 (form text or JSON number), None when absent or empty."""
    value = fields.get("color")
    message = "color must be an integer from 1 to 6"
    if value is None or value == "":
        return None
    if isinstance(value, bool | float):
        raise InvalidParameter("color", message)
    if isinstance(value, str):
        if not _COLOR_TEXT.fullmatch(value):
            raise InvalidParameter("color", message)
        value = int(value)
    if value not in COLORS:
        raise InvalidParameter("color", message)
    return value


async def get_space(session: AsyncSession, *, account_id: int, space_id: int) -> Space:
    """The account's space; another account's id is as unknown as a missing one."""
    space = await repository.get(session, account_id=account_id, space_id=space_id)
    if space is None:
        raise SpaceNotFound(space_id)
    return space


async def _flush(session: AsyncSession) -> None:
    try:
        await session.flush()
    except IntegrityError as exc:  # a concurrent write of the same name won the race
        raise SpaceNameTaken() from exc


async def create_space(session: AsyncSession, *, account_id: int, fields: Fields) -> Space:
    name = _name(fields)
    if name is None:
        raise InvalidParameter("name", "name is required")
    color = _color(fields)
    if await repository.name_exists(session, account_id=account_id, name=name):
        raise SpaceNameTaken()
    now = utcnow()  # one instant for both stamps, as Laravel does
    space = Space(
        account_id=account_id,
        name=name,
        color=color or DEFAULT_COLOR,
        created_at=now,
        updated_at=now,
    )
    session.add(space)
    await _flush(session)
    return space


async def update_space(
    session: AsyncSession, *, account_id: int, space_id: int, fields: Fields
) -> Space:
    """PUT and PATCH alike: the fields present are set, absent ones are kept."""
    space = await get_space(session, account_id=account_id, space_id=space_id)
    name, color = _name(fields), _color(fields)
    if name is not None and name != space.name:
        if await repository.name_exists(
            session, account_id=account_id, name=name, other_than=space.id
        ):
            raise SpaceNameTaken()
        space.name = name
    if color is not None:
        space.color = color
    await _flush(session)
    return space


async def delete_space(session: AsyncSession, *, account_id: int, space_id: int) -> int:
    space = await get_space(session, account_id=account_id, space_id=space_id)
    await session.delete(space)
    await session.flush()
    return space_id


async def list_spaces(
    session: AsyncSession, *, account_id: int, params: ListParams
) -> tuple[list[Space], int]:
    return await repository.list_page(session, account_id=account_id, params=params)
