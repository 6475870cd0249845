"""Wire shapes of the domains API, phpShort's (docs/design.md#domains)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Depends
from pydantic import BaseModel, Field

from atrium.db.models import Domain
from atrium.domains.errors import DomainNotFound
from atrium.domains.rules import domain_url
from atrium.domains.verification import VerificationError, txt_name
from atrium.kit.time import isoformat
from atrium.kit.wire_schemas import FORM_DOMAIN_NAME, FORM_PAGE_URL
from atrium.phpshort.resources import Deleted, Envelope, Page, path_id


class DomainVerification(BaseModel):
    """How the owner proves control of the name (docs/guide/domains.md), then `POST .../verify`; and
    what the last check found."""

    txt_name: str = Field(description="Publish a TXT record under this name ...")
    txt_value: str = Field(description="... whose text is this token.")
    last_error: VerificationError | None = Field(
        description="Why the last check did not verify the domain; null once verified or "
        "before any check. `txt_missing`: no TXT record at `txt_name`; `txt_mismatch`: TXT "
        "records there, none of them `txt_value`; `address_mismatch`: the name points "
        "elsewhere (only where the deployment takes that proof); `dns_timeout`: no DNS server "
        "answered in time; `dns_error`: DNS answered with a failure."
    )
    checked_at: str | None = Field(description="When DNS was last asked; null before any check.")


class DomainOut(BaseModel):
    """A domain record (phpShort's fields, then atrium's verification state)."""

    id: int
    name: str = Field(description="Normalised host name (lower case, IDNA punycode).")
    url: str = Field(description="The domain as a link: scheme (default https) + name.")
    index_page: str | None = Field(description="Where `/` on the domain redirects.")
    not_found_page: str | None = Field(description="Where any other path on the domain redirects.")
    created_at: str
    updated_at: str
    verified: bool = Field(description="Served only once verified; until then stored only.")
    verification: DomainVerification

    @classmethod
    def of(cls, domain: Domain, *, scheme: str) -> DomainOut:
        return cls(
            id=domain.id,
            name=domain.name,
            url=domain_url(scheme, domain.name),
            index_page=domain.index_page,
            not_found_page=domain.not_found_page,
            created_at=isoformat(domain.created_at),
            updated_at=isoformat(domain.updated_at),
            verified=domain.verified_at is not None,
            verification=DomainVerification(
                txt_name=txt_name(domain.name),
                txt_value=domain.verification_token,
                last_error=_last_error(domain),
                checked_at=_checked_at(domain),
            ),
        )


def _last_error(domain: Domain) -> VerificationError | None:
    if domain.verified_at is not None or domain.verification_error is None:
        return None
    return VerificationError(domain.verification_error)


def _checked_at(domain: Domain) -> str | None:
    checked = domain.verification_checked_at
    return None if checked is None else isoformat(checked)


# The `{id}` of a path: 400 when not an integer, 404 when no domain can have it.
DomainId = Annotated[int, Depends(path_id(DomainNotFound))]


class DomainEnvelope(Envelope[DomainOut]):
    """One domain: `{"data": {...}, "status": 200}`."""

    @classmethod
    def of(cls, domain: Domain, *, scheme: str) -> DomainEnvelope:
        return cls(data=DomainOut.of(domain, scheme=scheme))


class DomainPage(Page[DomainOut]):
    """A Laravel paginator page of domains."""


class DomainDeleted(Deleted):
    object: Literal["domain"] = "domain"


_NAME = Field(
    description="Host name (at most 255), unique in the deployment; upper case, Unicode and a "
    "scheme are taken too, and normalised.",
    json_schema_extra=FORM_DOMAIN_NAME,
)
_PAGE = Field(
    None,
    description="Absolute http(s) URL, at most 2,048 characters; empty clears.",
    json_schema_extra=FORM_PAGE_URL,
)


class DomainForm(BaseModel):
    """Store: `name` required, the two pages optional (the body the OpenAPI document shows)."""

    name: str = _NAME
    index_page: str | None = _PAGE
    not_found_page: str | None = _PAGE


class DomainUpdateForm(BaseModel):
    """Update: only the two pages (`name` is not updatable: sending it is a 400)."""

    index_page: str | None = _PAGE
    not_found_page: str | None = _PAGE
