"""turn policy: a policy's value and decisions per turn state (School)

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 06:30:00.000000

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision: str = '0003'
down_revision: Union[str, Sequence[str], None] = '0002'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table('turn_policy',
    sa.Column('policy_id', sa.Integer(), nullable=False),
    sa.Column('node_id', sa.Integer(), autoincrement=False, nullable=False, comment='a turn state (School: a used set)'),
    sa.Column('value', sa.Double(), nullable=False, comment='expected points still to come from the state under the policy'),
    sa.Column('moment2', sa.Double(), nullable=False, comment='expected square of those points'),
    sa.Column('decisions', sa.LargeBinary(), nullable=False, comment='one byte per turn position (outcome * 3 + rerolls left), see dicegraph.graphs.school.encode_decision'),
    sa.ForeignKeyConstraint(['policy_id'], ['policy.id'], name=op.f('fk_turn_policy_policy_id_policy')),
    sa.PrimaryKeyConstraint('policy_id', 'node_id', name=op.f('pk_turn_policy')),
    comment="games whose turn graph is stored once: a policy's value and decisions per turn state",
    sqlite_with_rowid=False
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table('turn_policy')
