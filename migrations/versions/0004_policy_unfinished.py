"""policy unfinished_since: a solve stored in steps is a policy only once every step is there

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 22:30:00.000000

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision: str = '0004'
down_revision: Union[str, Sequence[str], None] = '0003'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table('policy', schema=None) as batch_op:
        batch_op.add_column(sa.Column('unfinished_since', sa.DateTime(timezone=True), nullable=True,
                                      comment='set while a solve committed in steps is unfinished (it resumes; nothing lists it)'))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table('policy', schema=None) as batch_op:
        batch_op.drop_column('unfinished_since')
