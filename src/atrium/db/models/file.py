"""Files an account uploads to give its runs (`atrium.files`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from atrium.db.base import Base
from atrium.kit.time import utcnow


class StoredFile(Base):
    """An uploaded file: its metadata, and its bytes when they live in the database.

    `storage` says where the bytes are: `database` (`content`), `disk` or `s3` (under the key
    `id` in the configured folder or bucket). A row exists only once its bytes are stored, so
    a listed file can always be read."""

    __tablename__ = "files"
    __table_args__ = (Index("ix_files_account_id_created_at", "account_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    filename: Mapped[str] = mapped_column(String(255))
    content_type: Mapped[str] = mapped_column(String(127))
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    storage: Mapped[str] = mapped_column(String(16))
    # STORAGE EXTERNAL on PostgreSQL (migration 0025): uncompressed, so that a run reading a
    # range of the file (`files/reading.py`) makes the server read only that range.
    content: Mapped[bytes | None] = mapped_column(LargeBinary, default=None, deferred=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
