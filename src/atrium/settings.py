"""The one settings class. Nothing else in atrium reads the environment."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Configuration from `ATRIUM_*` environment variables (or a `.env` file)."""

    model_config = SettingsConfigDict(
        env_prefix="ATRIUM_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    # --- service -----------------------------------------------------------------------------
    public_url: str = Field(
        "http://127.0.0.1:8000", description="Base of every absolute URL in responses."
    )
    database_url: str = Field(
        "sqlite+aiosqlite:///./atrium.db",
        description="SQLAlchemy async URL: sqlite+aiosqlite:///path or postgresql+asyncpg://…",
    )
    redis_url: str | None = Field(
        None, description="Redis for rate-limit counters and event fan-out (scale-out)."
    )
    redis_prefix: str = Field(
        "atrium", description="Prefix of every Redis key and channel atrium uses."
    )
    bootstrap_key: str | None = Field(
        None, description="Key given to account `default` on the first start of an empty database."
    )
    log_level: str = Field("INFO", description="Log level of the atrium loggers.")
    db_pool_size: int = Field(10, ge=1, description="Connection pool size (PostgreSQL).")
    sqlite_busy_timeout_ms: int = Field(
        10_000, ge=0, description="How long SQLite waits on a locked database."
    )

    # --- request bounds --------------------------------------------------------------------------
    max_body_bytes: int = Field(1_048_576, ge=1, description="Largest accepted request body.")

    # --- rate limits (per key and group; `limits` notation) -----------------------------------
    rate_limit_standard: str = Field("1000/hour", description="Standard tier, per key and group.")
    rate_limit_premium: str = Field("10000/hour", description="Premium tier, per key and group.")
    rate_limit_anonymous: str = Field(
        "1000/hour", description="Requests without a valid key, per client address and group."
    )

    # --- domains and spaces ----------------------------------------------------------------------
    domain_url_scheme: Literal["http", "https"] = Field(
        "https", description="Scheme of a domain's `url` field."
    )
    domain_redirect_status: Literal[301, 302, 303, 307, 308] = Field(
        302, description="Status of a served domain's redirect."
    )


@lru_cache
def get_settings() -> Settings:
    """Settings read once from the environment (the CLI's default)."""
    return Settings()
