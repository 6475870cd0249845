"""The one settings class. Nothing else in atrium reads the environment."""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

import platformdirs
from cryptography.fernet import Fernet
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class ModelCreditPrice(BaseModel):
    """Credits charged per million tokens of one model."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


# The name of a named OpenAI-compatible provider, as `openai-compatible:<name>/<model>` uses it.
PROVIDER_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


class ProviderSetting(BaseModel):
    """One OpenAI-compatible server of `ATRIUM_PROVIDERS`."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(min_length=1, max_length=2048)
    api_key: SecretStr | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("base_url must be an http or https URL")
        return value


DEFAULT_FILE_TYPES = (
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
    "text/plain",
    "text/markdown",
    "text/csv",
    "application/json",
)


def default_database_url() -> str:
    """A SQLite file in the user's data directory (`~/.local/share/atrium/atrium.db` on Linux),
    so every command finds the same database whatever folder it is started from."""
    path = platformdirs.user_data_path("atrium", appauthor=False) / "atrium.db"
    return f"sqlite+aiosqlite:///{path}"


class Settings(BaseSettings):
    """Configuration from `ATRIUM_*` environment variables (or a `.env` file)."""

    model_config = SettingsConfigDict(
        env_prefix="ATRIUM_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    # --- service -----------------------------------------------------------------------------
    public_url: str = Field(
        "http://127.0.0.1:8000",
        description="Base of every absolute URL in responses; unset, `atrium serve` uses the "
        "address and port it binds (a wildcard bind: loopback).",
    )
    database_url: str = Field(
        default_factory=default_database_url,
        description="SQLAlchemy async URL: sqlite+aiosqlite:///path or postgresql+asyncpg://…",
    )
    redis_url: str | None = Field(
        None, description="Redis for rate-limit counters and event fan-out (scale-out)."
    )
    redis_prefix: str = Field(
        "atrium", description="Prefix of every Redis key and channel atrium uses."
    )
    redis_max_connections: int = Field(
        100,
        ge=2,
        description=(
            "Redis connections per process; a burst beyond it waits for one, not fails. A process"
            " with workers opens one more, for the wake-up pop."
        ),
    )
    bootstrap_key: str | None = Field(
        None, description="Key given to account `default` on the first start of an empty database."
    )
    log_level: str = Field("INFO", description="Log level of the atrium loggers.")
    db_pool_size: int = Field(
        10,
        ge=1,
        description="Connection pool size (PostgreSQL): sessions (with as many again in "
        "overflow) and, apart, point reads.",
    )
    db_pool_timeout_seconds: float = Field(
        30.0,
        gt=0,
        description="Longest a request waits for a pooled connection (PostgreSQL); then 503 BUSY.",
    )
    sqlite_busy_timeout_ms: int = Field(
        10_000, ge=0, description="How long SQLite waits on a locked database."
    )
    sqlite_soft_heap_limit_bytes: int = Field(
        2 * 1024 * 1024,
        ge=0,
        description="SQLite's soft heap limit, for the whole process (`PRAGMA soft_heap_limit`): "
        "above it SQLite's page caches reuse their own pages instead of allocating more, which "
        "keeps the process's heaps from creeping up under steady load; 0: no limit. SQLite only.",
    )
    malloc_trim_seconds: float = Field(
        30.0,
        ge=0,
        description="How often `atrium serve` and `atrium worker` hand the whole pages glibc's "
        "malloc holds free back to the system (`malloc_trim(0)`, ≈ 0.2 ms of CPU a call); 0: "
        "never. glibc only.",
    )

    # --- outbound requests and DNS (webhooks, MCP servers, domain verification) -----------------
    allow_private_targets: bool = Field(
        False,
        # With an alias, pydantic-settings adds no prefix: the names are spelled out in full.
        # The older webhook-only name stays accepted (environment, .env and keyword alike).
        validation_alias=AliasChoices(
            "ATRIUM_ALLOW_PRIVATE_TARGETS",
            "allow_private_targets",
            "ATRIUM_WEBHOOK_ALLOW_PRIVATE_TARGETS",
            "webhook_allow_private_targets",
        ),
        description="Allow outbound requests (webhooks, MCP servers) to addresses that are not "
        "globally routable: private, loopback, link-local, shared (100.64/10) and the like "
        "(`ATRIUM_WEBHOOK_ALLOW_PRIVATE_TARGETS` is an older name of it).",
    )
    dns_nameservers: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="DNS servers for outbound lookups and domain verification, comma-separated "
        "`ip` or `ip:port` (`[v6]:port`); empty: the system resolver.",
    )
    dns_timeout_seconds: float = Field(
        5.0, gt=0, description="Longest one DNS lookup (all its servers and retries) may take."
    )

    # --- request bounds --------------------------------------------------------------------------
    max_body_bytes: int = Field(1_048_576, ge=1, description="Largest accepted request body.")
    http_max_header_bytes: int = Field(
        65_536,
        ge=1_024,
        description="Largest request line and headers of one request (431 and closed beyond).",
    )
    http_header_timeout_seconds: float = Field(
        10.0,
        gt=0,
        description="Longest a request's line and headers may take to arrive (408 and closed).",
    )

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
    domain_verify_target: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host names or IP addresses of this deployment, comma-separated: a domain "
        "whose A/AAAA records (directly or through a CNAME) include one of their addresses is "
        "verified; empty: TXT verification only.",
    )
    domain_search_scan_max_rows: int = Field(
        20_000,
        ge=0,
        description="A domain search in an account of at most this many domains scans only "
        "the account's own rows, so its time tells nothing of other accounts' names; larger "
        "accounts use the shared substring index (faster there, but its time can depend on "
        "other accounts' data).",
    )

    # --- agent runs and workers ----------------------------------------------------------------
    run_worker: bool = Field(
        True, description="Run the in-process worker pool in `atrium serve` (--no-worker: off)."
    )
    # Runs spend their time waiting on a model that streams for seconds: a run in flight costs
    # about 0.1 MB and no CPU while it waits, so the default is sized for a thousand at once
    # (docs/decisions/0017-worker-concurrency-and-stream-caps.md).
    worker_concurrency: int = Field(
        1000, ge=1, description="Runs one worker executes at once (they mostly wait on models)."
    )
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
    run_max_prompt_chars: int = Field(
        32_000,
        ge=1,
        description="Largest accepted prompt, and largest tool output (a function tool's "
        "answer, an MCP tool's result) in characters of JSON.",
    )
    run_action_timeout_seconds: float = Field(
        86_400.0,
        gt=0,
        description="How long a run waits for its caller's actions (requires_action) before it "
        "fails with ACTION_EXPIRED.",
    )
    run_max_metadata_bytes: int = Field(4_096, ge=2, description="Largest run metadata (JSON).")
    run_request_limit: int = Field(20, ge=1, description="Model requests allowed per run.")
    run_total_tokens_limit: int | None = Field(
        200_000, ge=1, description="Input + output tokens allowed per run (None: no cap)."
    )
    run_event_flush_ms: int = Field(
        50, ge=0, description="Longest a streamed event waits to be persisted and delivered."
    )
    stream_coalesce_ms: int = Field(
        200,
        ge=0,
        le=5_000,
        description="Window over which an `openai-compatible:` model's streamed text chunks are "
        "joined before the agent loop handles them (0: each chunk on its own); a text waits "
        "at most this long, the first of an answer not at all.",
    )
    model_cache_size: int = Field(
        128,
        ge=1,
        description="Built models, and HTTP clients of named providers, kept per process; "
        "others are rebuilt on use.",
    )
    default_model: str = Field(
        "atrium:offline",
        description="Model of agents created without one, the default agent included "
        "(docs/guide/models.md), e.g. `openai:gpt-4o-mini`.",
    )
    openai_api_key: SecretStr | None = Field(
        None, description="API key of OpenAI, for `openai:<model>` (docs/guide/models.md)."
    )
    openai_base_url: str | None = Field(
        None, description="Base URL of the OpenAI API for `openai:<model>` (unset: OpenAI's own)."
    )
    anthropic_api_key: SecretStr | None = Field(
        None, description="API key of Anthropic, for `anthropic:<model>` (docs/guide/models.md)."
    )
    llm_base_url: str | None = Field(
        None,
        description="Base URL of the OpenAI-compatible server (`openai-compatible:<model>`): "
        "Ollama, vLLM, llama.cpp, … (docs/guide/models.md).",
    )
    llm_api_key: str | None = Field(None, description="API key of the OpenAI-compatible server.")
    providers: dict[str, ProviderSetting] = Field(
        default_factory=dict,
        description="Named OpenAI-compatible servers of the deployment, a JSON object: "
        '`{"ollama": {"base_url": "http://127.0.0.1:11434/v1"}, "vllm": {"base_url": "…", '
        '"api_key": "…", "headers": {"…": "…"}}}`; models name them '
        "`openai-compatible:<name>/<model>`. Every account may use them; an account's own "
        "provider of the same name (`/v1/providers`) takes precedence for that account. Not "
        "held to the outbound rule: they are the operator's, like `ATRIUM_LLM_BASE_URL`.",
    )
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

    # --- files (uploads given to runs: atrium.files) ------------------------------------------
    file_storage: Literal["database", "disk", "s3"] = Field(
        "database",
        description="Where uploaded files' bytes live: `database` (beside the row, as "
        "artifacts), `disk` (ATRIUM_FILE_DIR) or `s3` (ATRIUM_FILE_S3_URL).",
    )
    file_dir: Path | None = Field(
        None,
        description="The folder of `disk` storage (created 0700); default: `files` beside the "
        "SQLite database, else in the user's data directory.",
    )
    file_s3_url: str | None = Field(
        None, description="`s3://bucket/prefix` of `s3` storage (any S3-compatible store)."
    )
    file_s3_endpoint: str | None = Field(
        None, description="The S3 endpoint URL, for a store other than AWS (MinIO, Ceph, R2)."
    )
    file_s3_region: str = Field("us-east-1", description="The S3 region.")
    file_s3_access_key_id: str | None = Field(None, description="The S3 access key id.")
    file_s3_secret_access_key: SecretStr | None = Field(
        None, description="The S3 secret access key."
    )
    file_max_bytes: int = Field(
        20_971_520, ge=1, description="Largest uploaded file (refused while it is read)."
    )
    file_allowed_types: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_FILE_TYPES),
        description="Content types an upload may have, comma-separated, as sniffed from its "
        "bytes (not as the client names them); `image/*` allows every image type.",
    )
    file_inline_max_tokens: int = Field(
        8_000,
        ge=0,
        description="Tokens (about 4 characters each) of text files put into a run's prompt, "
        "all its files together; the rest is read with the `read_file` tool.",
    )
    sse_heartbeat_seconds: float = Field(
        15.0, gt=0, description="Comment frames that keep an idle event stream open."
    )
    sse_poll_seconds: float = Field(
        1.0, gt=0, description="A quiet event stream re-reads the database this often."
    )
    # A client following each of its runs holds one stream per run in flight: the cap leaves
    # room for the worker's default concurrency twice over (a 1,000-run burst with a follower
    # each had 895 streams refused at 100), and still bounds what one key can hold open.
    sse_max_streams_per_key: int = Field(
        2000, ge=1, description="Event streams one key may hold open at once, per process (429)."
    )
    sse_auth_recheck_seconds: float = Field(
        5.0,
        gt=0,
        description="An open event stream re-checks its key this often; a revoked key ends it.",
    )

    # --- tools: MCP servers and the secrets of their headers ---------------------------------
    secrets_key: SecretStr | None = Field(
        None,
        description="Fernet key(s) that encrypt stored secrets (MCP headers, providers' keys "
        "and headers, webhook signing secrets), comma-separated: the first encrypts, every one "
        "decrypts. Unset: a key file beside the SQLite database; PostgreSQL needs it to store "
        "secrets (webhook signing secrets are then stored in clear).",
    )
    mcp_connect_timeout_seconds: float = Field(
        10.0, gt=0, description="Longest a run waits to connect to an MCP server."
    )
    mcp_list_timeout_seconds: float = Field(
        10.0, gt=0, description="Longest a run waits for an MCP server's tool list."
    )
    mcp_call_timeout_seconds: float = Field(
        60.0, gt=0, description="Longest one MCP tool call may take."
    )
    mcp_tools_cache_seconds: float = Field(
        60.0,
        ge=0,
        description="How long an MCP server's tool list is reused by later runs (0: never).",
    )
    mcp_max_tools: int = Field(
        1_000, ge=1, description="Most tools one MCP server may list: more fails its runs."
    )
    mcp_max_tool_list_bytes: int = Field(
        2 * 1024 * 1024,
        ge=1024,
        description="Largest tool list of one MCP server (bytes of JSON): larger fails its runs.",
    )
    mcp_tools_cache_max_bytes: int = Field(
        16 * 1024 * 1024,
        ge=0,
        description="The MCP tool lists kept for later runs, in all (bytes of JSON): the "
        "oldest leave first.",
    )

    # --- webhooks --------------------------------------------------------------------------------
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

    retention_days: float = Field(
        0.0,
        ge=0,
        description="Finished threads are deleted with their runs, events and artifacts this "
        "many days after their last run finished (0 keeps them; usage analytics stay).",
    )
    retention_interval_seconds: float = Field(
        300.0, gt=0, description="How often each API process looks for expired threads."
    )

    # --- schedules -------------------------------------------------------------------------------
    schedule_poll_seconds: float = Field(
        5.0,
        gt=0,
        description="How often each process that executes runs looks for schedules whose fire "
        "time has come (a firing is at most this late while the service is up).",
    )
    schedule_misfire_grace_seconds: float = Field(
        60.0,
        gt=0,
        description="A fire time handled later than this is a missed one (the service was "
        "down): the schedule's `on_missed` decides what it does.",
    )
    schedule_catch_up_limit: int = Field(
        24,
        ge=1,
        le=1000,
        description="`on_missed: run_all` runs at most this many of the missed fire times (the "
        "latest ones); the earlier ones are recorded as skipped.",
    )
    schedule_max_per_account: int = Field(100, ge=1, description="Schedules one account may have.")
    schedule_clock_file: str | None = Field(
        None,
        description="For tests: a file holding an ISO 8601 time that the firing loop takes as "
        "the current time instead of the system clock (unset: the system clock).",
    )

    # --- memory blocks ---------------------------------------------------------------------------
    memory_block_max_chars: int = Field(
        20_000,
        ge=100,
        le=1_000_000,
        description="The largest `limit` (characters) a memory block may be given; every "
        "block attached to an agent is rendered into each of its runs' instructions.",
    )
    memory_block_max_per_account: int = Field(
        100, ge=1, description="Memory blocks one account may have."
    )

    # --- traces ----------------------------------------------------------------------------------
    otlp_endpoint: str | None = Field(
        None,
        pattern=r"^https?://[^\s]+$",
        description="Base URL of an OpenTelemetry collector's OTLP/HTTP receiver (such as "
        "`http://127.0.0.1:4318`; spans go to `/v1/traces` under it). Unset: no spans are "
        "exported and atrium never imports the exporter.",
    )
    trace_content: bool = Field(
        False,
        description="Put prompts, answers and tool arguments and outputs into the spans "
        "(exported and shown on the dashboard's waterfall).",
    )

    # --- memory ----------------------------------------------------------------------------------
    embeddings_model: str | None = Field(
        None,
        pattern=r"^(offline|openai:\S{1,200}|openai-compatible:\S{1,200})$",
        description="Embeddings of memory items, for search by meaning (docs/guide/memory.md): "
        "`offline` (built in, deterministic, 384 dimensions), `openai:<model>` (with "
        "ATRIUM_OPENAI_API_KEY) or `openai-compatible:<model>` (`/embeddings` at "
        "ATRIUM_LLM_BASE_URL). Unset: search by text only.",
    )
    memory_vector_cache_mb: float = Field(
        512,
        ge=0,
        le=1_000_000,
        description="Memory (MB) each API process may keep the vectors of search by meaning "
        "in, per (account, embeddings model), caught up with other processes' writes on each "
        "search (docs/decisions/0065-memory-vector-cache.md). An account whose vectors do not "
        "fit is scanned from the database on every search instead (1.6 KB a vector of 384 "
        "dimensions: 512 MB holds ~340,000). 0: always scan.",
    )
    memory_purge_seconds: float = Field(
        60.0,
        gt=0,
        le=86_400,
        description="Every API process deletes expired memory items at start and then this "
        "often (seconds). Reads never return an expired item meanwhile: this only frees their "
        "rows (docs/decisions/0058-memory.md).",
    )

    @field_validator("dns_nameservers", "domain_verify_target", "file_allowed_types", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("dns_nameservers")
    @classmethod
    def _nameservers(cls, value: list[str]) -> list[str]:
        for entry in value:
            dns_server_address(entry)  # raises ValueError, shown as a settings error
        return value

    @field_validator("providers")
    @classmethod
    def _provider_names(cls, value: dict[str, ProviderSetting]) -> dict[str, ProviderSetting]:
        for name in value:
            if not PROVIDER_NAME.match(name):
                raise ValueError(
                    f"provider name {name[:64]!r} must match {PROVIDER_NAME.pattern} "
                    "(lower-case letters, digits, _ and -)"
                )
        return value

    @field_validator("secrets_key")
    @classmethod
    def _fernet_keys(cls, value: SecretStr | None) -> SecretStr | None:
        # A bad key must stop the start, not fail the first agent that stores a header.
        if value is not None:
            for key in value.get_secret_value().split(","):
                try:
                    Fernet(key.strip())
                except ValueError:
                    raise ValueError(
                        "each key must be 32 url-safe base64-encoded bytes: "
                        "cryptography.fernet.Fernet.generate_key() makes one"
                    ) from None
        return value


def dns_server_address(entry: str) -> tuple[str, int]:
    """`127.0.0.1:5353` → ("127.0.0.1", 5353); `[::1]:53`, `::1` and `10.0.0.1` (port 53) too."""
    host, port = entry.strip(), "53"
    if host.startswith("[") and "]:" in host:
        host, _, port = host[1:].partition("]:")
    elif host.count(":") == 1:
        host, _, port = host.partition(":")
    try:
        ipaddress.ip_address(host.strip("[]"))
        number = int(port)
    except ValueError:
        number = 0
    if not 0 < number < 65536:
        raise ValueError(f"DNS server {entry!r} must be ip, ip:port or [ipv6]:port")
    return host.strip("[]"), number


@lru_cache
def get_settings() -> Settings:
    """Settings read once from the environment (the CLI's default)."""
    return Settings()
