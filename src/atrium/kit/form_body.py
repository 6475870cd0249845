"""Request bodies of the phpShort-compatible groups: form-urlencoded, multipart or JSON.

phpShort (Laravel) reads fields the same way whatever the Content-Type, so the body is parsed by
its media type here rather than with `Form()` (which would reject JSON). Every field arrives as
a `FieldValue`: text from forms, text/number/bool/null from JSON; services judge the types.
Strings are trimmed, as Laravel's TrimStrings middleware does.
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import Depends, Request
from starlette.datastructures import UploadFile

from atrium.errors import InvalidParameter

FieldValue = str | int | float | bool | None
# A `FieldValue` as the OpenAPI document states it (a JSON body's other fields are these too).
FIELD_VALUE_SCHEMA: dict[str, object] = {"type": ["string", "number", "boolean", "null"]}
Fields = dict[str, FieldValue]


async def _form_fields(request: Request) -> Fields:
    try:
        form = await request.form()
    except Exception as exc:  # malformed multipart/urlencoded bodies surface as several types
        raise InvalidParameter("body", "request body could not be parsed as a form") from exc
    fields: Fields = {}
    try:
        for key, value in form.multi_items():
            if isinstance(value, UploadFile):
                raise InvalidParameter(key, f"{key} must be text, not a file")
            fields[key] = value.strip()  # a repeated field keeps its last value, as PHP does
    finally:
        await form.close()  # only text is kept: release any uploaded file now
    return fields


async def _json_fields(request: Request) -> Fields:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        document = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # deep nesting: RecursionError
        raise InvalidParameter("body", "request body is not valid JSON") from exc
    if not isinstance(document, dict):
        raise InvalidParameter("body", "request body must be a JSON object")
    fields: Fields = {}
    for key, value in document.items():
        if isinstance(value, str):
            if not _is_unicode_text(value):
                raise InvalidParameter(key, f"{key} must be valid Unicode text")
            fields[key] = value.strip()
        elif value is None or isinstance(value, int | float | bool):
            fields[key] = value
        else:
            raise InvalidParameter(key, f"{key} must be a string or a number")
    return fields


def _is_unicode_text(value: str) -> bool:
    """False for lone surrogates (`"\\ud800"` in JSON): they can not be stored or echoed."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def form_fields(request: Request) -> Fields:
    """The body's fields, whatever the (gateway-approved) Content-Type."""
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type == "application/json":
        return await _json_fields(request)
    if media_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        return await _form_fields(request)
    return {}  # no body at all: every field is absent


FormFields = Annotated[Fields, Depends(form_fields)]


def text_field(fields: Fields, name: str) -> str | None:
    """The field as text, None when absent or null; numbers and booleans are a 400."""
    value = fields.get(name)
    if value is None or isinstance(value, str):
        return value
    raise InvalidParameter(name, f"{name} must be a string")
