"""`/api/v1/public/files`: upload, list, read, download and delete an account's files."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request, status
from fastapi.responses import StreamingResponse

from atrium.errors import InvalidParameter
from atrium.files import presenters, service
from atrium.files.errors import FileNotFound, FileRefused
from atrium.files.schemas import FileDeleted, FileList, FileOut
from atrium.http.deps import CurrentPrincipal, DatabaseDep, SettingsDep
from atrium.http.openapi import error_responses
from atrium.kit.cursor import CursorQuery

router = APIRouter(prefix="/files", tags=["files"])
_NOT_FOUND = error_responses(FileNotFound)
_UPLOAD_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "additionalProperties": False,
                    "properties": {"file": {"type": "string", "format": "binary", "minLength": 1}},
                }
            }
        },
    }
}


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=FileOut,
    responses=error_responses(FileRefused, InvalidParameter),
    openapi_extra=_UPLOAD_BODY,
)
async def upload_file(
    request: Request, db: DatabaseDep, principal: CurrentPrincipal, settings: SettingsDep
) -> FileOut:
    """Upload a file (multipart field `file`), at most ATRIUM_FILE_MAX_BYTES. Its type is
    sniffed from its bytes and must be on ATRIUM_FILE_ALLOWED_TYPES; an empty file, one over
    the cap, one of a type not allowed, or one whose bytes are of another type than its name
    says is a 400 naming `file`, and nothing of it is kept."""
    row = await service.upload_file(db, request, settings=settings, account_id=principal.account_id)
    return presenters.file_out(settings, row)


@router.get("", response_model=FileList)
async def list_files(
    db: DatabaseDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: CursorQuery = None,
) -> FileList:
    """The account's files, newest first; follow `next_cursor` while `has_more`."""
    page = await service.list_files(db, account_id=principal.account_id, limit=limit, cursor=cursor)
    return FileList(
        data=[presenters.file_out(settings, row) for row in page.rows],
        has_more=page.next_cursor is not None,
        next_cursor=page.next_cursor,
    )


@router.get("/{file_id}", response_model=FileOut, responses=_NOT_FOUND)
async def get_file(
    file_id: str, db: DatabaseDep, principal: CurrentPrincipal, settings: SettingsDep
) -> FileOut:
    """The file's metadata."""
    row = await service.get_file(db, account_id=principal.account_id, file_id=file_id)
    return presenters.file_out(settings, row)


@router.get(
    "/{file_id}/content",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"*/*": {"schema": {"type": "string", "format": "binary"}}}},
        **_NOT_FOUND,
    },
)
async def download_file(
    file_id: str, db: DatabaseDep, principal: CurrentPrincipal, settings: SettingsDep
) -> StreamingResponse:
    """The file's bytes, with its sniffed content type, as an attachment."""
    row, chunks = await service.content_chunks(
        db, settings, account_id=principal.account_id, file_id=file_id
    )
    return StreamingResponse(
        chunks,
        media_type=row.content_type,
        headers={
            "Content-Length": str(row.size_bytes),
            "Content-Disposition": f"attachment; filename*=UTF-8''{quote(row.filename)}",
            "X-Content-Type-Options": "nosniff",
            "ETag": f'"{row.sha256}"',
        },
    )


@router.delete("/{file_id}", response_model=FileDeleted, responses=_NOT_FOUND)
async def delete_file(
    file_id: str, db: DatabaseDep, principal: CurrentPrincipal, settings: SettingsDep
) -> FileDeleted:
    """Delete the file: its row and its bytes. Runs that were given it keep their reference;
    one that has not started yet is told the file was deleted."""
    deleted = await service.delete_file(
        db, settings, account_id=principal.account_id, file_id=file_id
    )
    return FileDeleted(file_id=deleted)
