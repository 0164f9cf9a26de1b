"""Python values written into Spark SQL as literals (Spark's Thrift server takes no parameters).

>>> literal(0.1), literal("it's"), literal(None), literal(True), literal(b"\\x01")
('0.1D', "'it\\\\'s'", 'NULL', 'TRUE', "X'01'")
"""

from __future__ import annotations

import datetime
import math
from typing import Any


def literal(value: Any) -> str:
    """Return ``value`` as a Spark SQL literal."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return f"CAST('{value}' AS DOUBLE)"
        return f"{value!r}D"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"X'{bytes(value).hex()}'"
    if isinstance(value, datetime.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"
