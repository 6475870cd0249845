"""Request and response bodies of `/v1/providers`."""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from atrium.db.models import Provider
from atrium.kit.headers import HEADERS_SCHEMA
from atrium.kit.time import isoformat
from atrium.kit.wire_schemas import ALWAYS_SENT, PUBLIC_URL, never_null, refuse_null
from atrium.secrets_at_rest import MASK
from atrium.settings import PROVIDER_NAME

MAX_API_KEY: Final = 8_192
# Sent as `Authorization: Bearer <api_key>`: printable ASCII, no spaces.
API_KEY_PATTERN: Final = f"^[\\x21-\\x7e]{{1,{MAX_API_KEY}}}$"


def _name(value: str) -> str:
    if not PROVIDER_NAME.match(value):
        raise ValueError(
            "must be 1-32 characters: lower-case letters, digits, _ and -, starting with a "
            "letter (models name it as openai-compatible:<name>/<model>)"
        )
    return value


ProviderName = Annotated[
    str, AfterValidator(_name), Field(json_schema_extra={"pattern": PROVIDER_NAME.pattern})
]
BaseUrl = Annotated[
    str,
    Field(
        description="The server's OpenAI API root, the part before `/chat/completions` "
        "(usually ending in `/v1`): an http or https URL of a public host, at most 2048 "
        "characters (loopback and private addresses need ATRIUM_ALLOW_PRIVATE_TARGETS).",
        json_schema_extra=PUBLIC_URL,
    ),
]
ApiKey = Annotated[
    str,
    Field(
        description='Sent as `Authorization: Bearer <api_key>`; responses show "***", and '
        '"***" sent back keeps the stored key (while base_url stays the same).',
        json_schema_extra={"pattern": API_KEY_PATTERN},
    ),
]
Headers = Annotated[
    dict[str, str],
    Field(
        description='Sent with every request to the server; responses show each value as "***", '
        'and "***" sent back keeps the stored value (while base_url stays the same).',
        json_schema_extra=HEADERS_SCHEMA,
    ),
]


class _Strict(BaseModel):
    # Unknown keys are errors (a typo must not be silently ignored); values are not coerced.
    model_config = ConfigDict(extra="forbid", strict=True)


class ProviderCreate(_Strict):
    """A new provider: a `name` unique in the account, the server's `base_url`, and the
    `api_key` and `headers` it wants, if any."""

    name: ProviderName
    base_url: BaseUrl
    api_key: ApiKey | None = None
    headers: Headers = Field(default_factory=dict)


_NEVER_NULL: Final = ("name", "base_url", "headers")


class ProviderUpdate(_Strict):
    """PUT: the fields present replace the provider's; `api_key: null` removes the key."""

    model_config = ConfigDict(json_schema_extra=never_null(*_NEVER_NULL))

    name: ProviderName | None = None
    base_url: BaseUrl | None = None
    api_key: ApiKey | None = None
    headers: Headers | None = None

    _not_null = field_validator(*_NEVER_NULL, mode="before")(refuse_null)

    def given(self) -> set[str]:
        return set(self.model_fields_set)


class ProviderOut(BaseModel):
    """A provider as the API shows it: its secrets as `"***"`."""

    provider_id: str
    name: str
    base_url: str
    api_key: str | None = Field(description='"***" when a key is stored, else null.')
    headers: dict[str, str] = Field(description='Each value shown as "***".')
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, provider: Provider) -> ProviderOut:
        return cls(
            provider_id=provider.id,
            name=provider.name,
            base_url=provider.base_url,
            api_key=MASK if provider.api_key is not None else None,
            headers=dict.fromkeys(provider.headers or {}, MASK),
            created_at=isoformat(provider.created_at),
            updated_at=isoformat(provider.updated_at),
        )


class ProviderList(BaseModel):
    """The account's providers by name, and the names of the server's own (`ATRIUM_PROVIDERS`),
    which every account may use too; an account's provider of the same name comes first."""

    data: list[ProviderOut]
    server_providers: list[str]


class ProviderDeleted(BaseModel):
    model_config = ALWAYS_SENT

    provider_id: str
    name: str
    deleted: bool = True
