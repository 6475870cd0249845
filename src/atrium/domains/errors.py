"""The errors of the domains group, named; each keeps the status and code of its parent."""

from __future__ import annotations

from atrium.errors import InvalidParameter
from atrium.phpshort.resources import RecordNotFound


class DomainNameTaken(InvalidParameter):
    """Another domain, of any account, has the name (names are unique in the deployment)."""

    def __init__(self) -> None:
        super().__init__("name", "name has already been taken")


class DomainNotFound(RecordNotFound):
    """The account has no domain with the `id` (another account's is as unknown as none)."""

    noun = "domain"
