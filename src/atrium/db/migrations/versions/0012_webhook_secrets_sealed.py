"""webhook signing secrets sealed with the deployment's key

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28

Endpoints' and runs' signing secrets stored in clear are encrypted with the key MCP headers use
(`secrets_at_rest`): `ATRIUM_SECRETS_KEY`, or on SQLite the key file beside the database. A
PostgreSQL deployment without the key keeps them in clear, as it stores new ones. The columns
become TEXT: a token is 140 characters. The downgrade opens them again, and needs the key.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op

from atrium.secrets_at_rest import SecretBox, SecretsUnavailable
from atrium.settings import Settings, get_settings

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A secret in clear starts with it; a Fernet token never does.
_CLEAR_PREFIX = "whsec_"
# (table, id column, secret column)
_SECRETS = (("webhook_endpoints", "id", "secret"), ("runs", "id", "webhook_secret"))


def _box() -> SecretBox:
    settings = context.config.attributes.get("settings")
    return SecretBox.of(settings if isinstance(settings, Settings) else get_settings())


def _rewrite(table: str, id_column: str, column: str, *, sealing: bool, box: SecretBox) -> None:
    rows = sa.table(table, sa.column(id_column), sa.column(column))
    connection = op.get_bind()
    found = connection.execute(
        sa.select(rows.c[id_column], rows.c[column]).where(rows.c[column].is_not(None))
    ).all()
    changed = [
        {"b_id": row_id, "b_secret": box.encrypt(secret) if sealing else box.decrypt(secret)}
        for row_id, secret in found
        if secret.startswith(_CLEAR_PREFIX) == sealing
    ]
    if changed:
        connection.execute(
            sa.update(rows)
            .where(rows.c[id_column] == sa.bindparam("b_id"))
            .values({column: sa.bindparam("b_secret")}),
            changed,
        )


def upgrade() -> None:
    for table, _, column in _SECRETS:
        with op.batch_alter_table(table) as batch:
            batch.alter_column(column, type_=sa.Text(), existing_type=sa.String(64))
    box = _box()
    try:
        for table, id_column, column in _SECRETS:
            _rewrite(table, id_column, column, sealing=True, box=box)
    except SecretsUnavailable:
        pass  # PostgreSQL without ATRIUM_SECRETS_KEY: in clear, as it stores new secrets


def downgrade() -> None:
    box = _box()
    for table, id_column, column in _SECRETS:
        _rewrite(table, id_column, column, sealing=False, box=box)
    for table, _, column in _SECRETS:
        with op.batch_alter_table(table) as batch:
            batch.alter_column(column, type_=sa.String(64), existing_type=sa.Text())
