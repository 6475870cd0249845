"""Named OpenAI-compatible model servers of an account (`openai-compatible:<name>/<model>`)."""

from __future__ import annotations

from sqlalchemy import JSON, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from atrium.db.base import Base, TimestampMixin


class Provider(TimestampMixin, Base):
    """An account's OpenAI-compatible server. `api_key` and the header values are Fernet
    tokens (`secrets_at_rest`), never the secrets themselves."""

    __tablename__ = "providers"
    __table_args__ = (
        # One name per account; also the index every run on a named provider reads it by.
        UniqueConstraint("account_id", "name", name="uq_providers_account_id_name"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(32))
    base_url: Mapped[str] = mapped_column(String(2048))
    api_key: Mapped[str | None] = mapped_column(Text, default=None)
    # Header name -> encrypted value.
    headers: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
