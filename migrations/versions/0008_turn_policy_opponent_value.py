"""turn_policy opponent_value: a race's best response keeps, beside its own value, the answered policy's

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30 08:30:00.000000

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision: str = '0008'
down_revision: Union[str, Sequence[str], None] = '0007'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

OPPONENT_VALUE = ("a best response in a game for two: the value at the state of the policy it answers, to move there "
                  "against it, which its moves are ranked by (NULL: the policy's own value, in self-play)")


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table('turn_policy', schema=None) as batch_op:
        batch_op.add_column(sa.Column('opponent_value', sa.Double(), nullable=True, comment=OPPONENT_VALUE))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table('turn_policy', schema=None) as batch_op:
        batch_op.drop_column('opponent_value')
