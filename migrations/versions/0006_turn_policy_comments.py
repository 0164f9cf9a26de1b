"""turn_policy's comments name no game: a turn state, and decisions packed by the game's DecisionEncoder

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 20:00:00.000000

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa

from dicegraph.store.backends import backend_of


# revision identifiers, used by Alembic.
revision: str = '0006'
down_revision: Union[str, Sequence[str], None] = '0005'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

NODE_ID = ('a turn state', 'a turn state (School: a used set)')
DECISIONS = ("the policy's moves at the turn's decision nodes, packed by the game's DecisionEncoder",
             'one byte per turn position (outcome * 3 + rerolls left), see dicegraph.graphs.school.encode_decision')


def _recomment(new: int) -> None:
    """Give turn_policy's two columns their comments (``new`` 0: this revision's, 1: the one before); only where the
    database keeps comments (SQLite keeps none, and DuckDB's Alembic support cannot change one)."""
    if not backend_of(op.get_bind()).alembic_alters_comments:
        return
    old = 1 - new
    op.alter_column('turn_policy', 'node_id', existing_type=sa.Integer(), existing_nullable=False,
                    comment=NODE_ID[new], existing_comment=NODE_ID[old])
    op.alter_column('turn_policy', 'decisions', existing_type=sa.LargeBinary(), existing_nullable=False,
                    comment=DECISIONS[new], existing_comment=DECISIONS[old])


def upgrade() -> None:
    """Upgrade schema."""
    _recomment(0)


def downgrade() -> None:
    """Downgrade schema."""
    _recomment(1)
