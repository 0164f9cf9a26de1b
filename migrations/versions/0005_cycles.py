"""cycles: an edge's sign (the turn passes to the opponent), a layer's cyclic component, how a solve converged, reach unknown in cycles

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 10:00:00.000000

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa

from dicegraph.store.backends import backend_of


# revision identifiers, used by Alembic.
revision: str = '0005'
down_revision: Union[str, Sequence[str], None] = '0004'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def _comment(new: str, old: str) -> dict[str, str]:
    """Return alter_column's comment arguments: none where Alembic cannot change a comment (DuckDB; SQLite keeps none)."""
    if not backend_of(op.get_bind()).alembic_alters_comments:
        return {}
    return {"comment": new, "existing_comment": old}


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table('edge', schema=None) as batch_op:
        batch_op.add_column(sa.Column('sign', sa.SmallInteger(), server_default='1', nullable=False,
                                      comment='-1 where the turn passes to the opponent: the edge is worth reward + sign * value(dst)'))
    with op.batch_alter_table('layer', schema=None) as batch_op:
        batch_op.add_column(sa.Column('cycle_start', sa.Integer(), nullable=True,
                                      comment='layers of a cyclic component: its first layer, which its edges may go back to'))
    with op.batch_alter_table('policy', schema=None) as batch_op:
        batch_op.add_column(sa.Column('convergence', sa.Text(), nullable=True,
                                      comment='graphs with cycles: how the solve converged (JSON: method, passes, residual)'))
    with op.batch_alter_table('value', schema=None, table_kwargs={'sqlite_with_rowid': False}) as batch_op:
        batch_op.alter_column('reach', existing_type=sa.Double(), nullable=True, **_comment(
            'probability of reaching the node from the root (NULL in graphs with cycles)',
            'probability of reaching the node from the root'))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table('value', schema=None, table_kwargs={'sqlite_with_rowid': False}) as batch_op:
        batch_op.alter_column('reach', existing_type=sa.Double(), nullable=False, **_comment(
            'probability of reaching the node from the root',
            'probability of reaching the node from the root (NULL in graphs with cycles)'))
    with op.batch_alter_table('policy', schema=None) as batch_op:
        batch_op.drop_column('convergence')
    with op.batch_alter_table('layer', schema=None) as batch_op:
        batch_op.drop_column('cycle_start')
    with op.batch_alter_table('edge', schema=None) as batch_op:
        batch_op.drop_column('sign')
