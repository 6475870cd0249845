"""The one settings class. Nothing else in atrium reads the environment."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ModelCreditPrice(BaseModel):
    """Credits charged per million tokens of one model."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


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

    # --- agent runs and workers ----------------------------------------------------------------
    run_worker: bool = Field(
        True, description="Run the in-process worker pool in `atrium serve` (--no-worker: off)."
    )
    worker_concurrency: int = Field(32, ge=1, description="Runs one worker executes at once.")
    run_lease_seconds: float = Field(
        30.0, gt=0, description="A claimed run whose lease is not renewed this long is re-queued."
    )
    run_heartbeat_seconds: float = Field(
        10.0, gt=0, description="How often a worker renews the leases of its runs."
    )
    run_poll_seconds: float = Field(
        2.0, gt=0, description="Safety-net poll of the queue; new runs wake workers at once."
    )
    shutdown_timeout_seconds: float = Field(
        30.0,
        gt=0,
        description="Longest a stopping process waits for its worker pool to hand runs back.",
    )
    run_max_attempts: int = Field(
        3, ge=1, description="Claims of one run before a lost worker fails it with WORKER_LOST."
    )
    run_timeout_seconds: float = Field(300.0, gt=0, description="Longest a run may execute.")
    run_max_prompt_chars: int = Field(32_000, ge=1, description="Largest accepted prompt.")
    run_max_metadata_bytes: int = Field(4_096, ge=2, description="Largest run metadata (JSON).")
    run_request_limit: int = Field(20, ge=1, description="Model requests allowed per run.")
    run_total_tokens_limit: int | None = Field(
        200_000, ge=1, description="Input + output tokens allowed per run (None: no cap)."
    )
    run_event_flush_ms: int = Field(
        50, ge=0, description="Longest a streamed event waits to be persisted and delivered."
    )
    llm_base_url: str | None = Field(
        None, description="Base URL of the OpenAI-compatible server (`openai-compatible:<model>`)."
    )
    llm_api_key: str | None = Field(None, description="API key of the OpenAI-compatible server.")
    credit_prices: dict[str, ModelCreditPrice] = Field(
        default_factory=lambda: {"atrium:offline": ModelCreditPrice(input=1.0, output=2.0)},
        description="Credits per million tokens by model name (JSON); others use the default.",
    )
    credit_price_default: ModelCreditPrice = Field(
        default_factory=lambda: ModelCreditPrice(input=5.0, output=15.0),
        description="Credits per million tokens of a model missing from `credit_prices`.",
    )
    artifact_max_bytes: int = Field(1_048_576, ge=1, description="Largest artifact content.")
    artifact_max_per_run: int = Field(20, ge=1, description="Artifacts one run may write.")
    sse_heartbeat_seconds: float = Field(
        15.0, gt=0, description="Comment frames that keep an idle event stream open."
    )
    sse_poll_seconds: float = Field(
        1.0, gt=0, description="A quiet event stream re-reads the database this often."
    )
    sse_max_streams_per_key: int = Field(
        100, ge=1, description="Event streams one key may hold open at once, per process (429)."
    )

    # --- webhooks --------------------------------------------------------------------------------
    webhook_allow_private_targets: bool = Field(
        False,
        description="Allow webhook URLs on private, loopback and link-local addresses.",
    )
    webhook_timeout_seconds: float = Field(
        10.0, gt=0, description="Longest one webhook delivery attempt may take."
    )
    webhook_max_attempts: int = Field(
        8, ge=1, description="Attempts of one webhook delivery before it is marked failed."
    )
    webhook_backoff_seconds: float = Field(
        5.0, gt=0, description="Delay before the second attempt of a webhook delivery."
    )
    webhook_backoff_factor: float = Field(
        4.0, ge=1, description="Each later webhook retry waits this many times longer."
    )
    webhook_backoff_max_seconds: float = Field(
        21_600.0, gt=0, description="Longest wait between two webhook delivery attempts."
    )
    webhook_poll_seconds: float = Field(
        2.0, gt=0, description="Safety-net scan for due webhook deliveries."
    )
    webhook_concurrency: int = Field(
        8, ge=1, description="Webhook deliveries one worker sends at once."
    )
    webhook_max_endpoints_per_account: int = Field(
        20, ge=1, description="Webhook endpoints one account may register."
    )
    webhook_retention_days: float = Field(
        30.0,
        ge=0,
        description="Delivered and failed webhook deliveries are deleted this many days after "
        "they were created (0 keeps them).",
    )


@lru_cache
def get_settings() -> Settings:
    """Settings read once from the environment (the CLI's default)."""
    return Settings()
