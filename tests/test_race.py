"""5000 as a race (shared/RULES.md): the exact and numpy references agree; the game itself is checked against them."""

from __future__ import annotations

import math

import pytest

from tests import race_exact, race_numpy


@pytest.mark.parametrize("target", [150, 300])
def test_numpy_reference_matches_exact_rationals(target):
    exact = race_exact.solve(target)
    win, passes = race_numpy.solve(target)
    for (a, b), value in exact.items():
        assert math.isclose(win[a, b], float(value), rel_tol=1e-12, abs_tol=1e-15)
    assert 0.5 < exact[0, 0] < 1  # moving first is an advantage
    assert max(passes) <= 4
