"""policy responds_to: a best response names the policy it is solved against

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-29 05:30:00.000000

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision: str = '0007'
down_revision: Union[str, Sequence[str], None] = '0006'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

RESPONDS_TO = ("a best response: the id of the policy it is solved against, its values those of playing against "
               "it (NULL: values in self-play)")


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table('policy', schema=None) as batch_op:
        batch_op.add_column(sa.Column('responds_to', sa.Integer(), nullable=True, comment=RESPONDS_TO))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table('policy', schema=None) as batch_op:
        batch_op.drop_column('responds_to')
