"""Request bodies of the phpShort-compatible groups: form-urlencoded, multipart or JSON.

phpShort (Laravel) reads fields the same way whatever the Content-Type, so the body is parsed by
its media type here rather than with `Form()` (which would reject JSON). Every field arrives as
a `FieldValue`: text from forms, text/number/bool/null from JSON; services judge the types.
Strings are trimmed, as Laravel's TrimStrings middleware does.

Text is UTF-8 (docs/design.md#domains), raw or percent-encoded, with or without
`charset=utf-8`: a form-urlencoded body is decoded here, because Starlette's parser reads raw
bytes as Latin-1 (`name=üüü` would be stored as `Ã¼Ã¼Ã¼`). Bytes that are not UTF-8 are a
400 naming the field; a declared charset other than UTF-8 (or its subset US-ASCII) is a 415:
nothing is ever stored re-encoded.
"""

from __future__ import annotations

import json
from typing import Annotated
from urllib.parse import unquote_to_bytes

from fastapi import Depends, Request
from starlette.datastructures import UploadFile

from atrium.errors import InvalidParameter, UnsupportedMediaType

FieldValue = str | int | float | bool | None
# A `FieldValue` as the OpenAPI document states it (a JSON body's other fields are these too).
FIELD_VALUE_SCHEMA: dict[str, object] = {"type": ["string", "number", "boolean", "null"]}
Fields = dict[str, FieldValue]


# Starlette's own bound for a form (its `max_fields`): more is a 400, not unbounded work.
MAX_FORM_FIELDS = 1000
_UTF8_CHARSETS = frozenset({"utf-8", "utf8", "us-ascii", "ascii"})


def _utf8(raw: bytes, parameter: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParameter(parameter, f"{parameter} must be UTF-8 text") from exc


def _urlencoded_fields(body: bytes) -> Fields:
    """`a=1&b=x+y&c=%C3%BC&d=ü`, as PHP splits it (on `&` only; a pair without `=` is an empty
    value) and with every name and value, raw or percent-encoded, decoded as UTF-8."""
    pairs = [pair for pair in body.split(b"&") if pair]
    if len(pairs) > MAX_FORM_FIELDS:
        raise InvalidParameter("body", f"a form may have at most {MAX_FORM_FIELDS} fields")
    fields: Fields = {}
    for pair in pairs:
        raw_name, _, raw_value = pair.partition(b"=")
        name = _utf8(unquote_to_bytes(raw_name.replace(b"+", b" ")), "body")
        value = _utf8(unquote_to_bytes(raw_value.replace(b"+", b" ")), name)
        fields[name] = value.strip()  # a repeated field keeps its last value, as PHP does
    return fields


def _charset(content_type: str) -> str | None:
    """The `charset` parameter of a Content-Type, lower-cased and unquoted; None when absent
    (or empty)."""
    for parameter in content_type.split(";")[1:]:
        key, _, value = parameter.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip('"').strip().lower() or None
    return None


async def _multipart_fields(request: Request) -> Fields:
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
    content_type = request.headers.get("content-type", "")
    media_type = content_type.split(";", 1)[0].strip().lower()
    if not media_type:
        return {}  # no body at all: every field is absent
    charset = _charset(content_type)
    if charset is not None and charset not in _UTF8_CHARSETS:
        raise UnsupportedMediaType(
            "request bodies must be UTF-8: send charset=utf-8 or no charset",
            details={"content_type": content_type[:200]},
        )
    if media_type == "application/json":
        return await _json_fields(request)
    if media_type == "application/x-www-form-urlencoded":
        return _urlencoded_fields(await request.body())
    if media_type == "multipart/form-data":
        return await _multipart_fields(request)
    return {}


FormFields = Annotated[Fields, Depends(form_fields)]


def text_field(fields: Fields, name: str) -> str | None:
    """The field as text, None when absent or null; numbers and booleans are a 400."""
    value = fields.get(name)
    if value is None or isinstance(value, str):
        return value
    raise InvalidParameter(name, f"{name} must be a string")
