"""A file row as the API shows it."""

from __future__ import annotations

from atrium.db.models import StoredFile
from atrium.files.schemas import FileOut
from atrium.kit.time import isoformat
from atrium.settings import Settings


def file_out(settings: Settings, row: StoredFile) -> FileOut:
    base = settings.public_url.rstrip("/")
    return FileOut(
        file_id=row.id,
        filename=row.filename,
        content_type=row.content_type,
        size_bytes=row.size_bytes,
        sha256=row.sha256,
        created_at=isoformat(row.created_at),
        content_url=f"{base}/api/v1/public/files/{row.id}/content",
    )
