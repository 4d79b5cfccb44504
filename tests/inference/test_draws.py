"""The one rule of how many draws a run keeps (plausible.inference.draws.resolve_draws)."""

import pytest

from plausible.inference.draws import (AUTO_MAX_DRAWS, AUTO_WORK, EXACT, FIXED_DRAWS, PYMC,
                                       SHARDS, AutoDrawsUnavailable, resolve_draws)
from plausible.inference.driver import AUTO, AUTO_FIRST_DRAWS


def test_a_number_is_kept_on_every_route_and_the_default_is_auto_except_for_shards():
    for route in ("extended", EXACT, PYMC, SHARDS):
        assert resolve_draws(7, route=route) == (7, None)
    assert resolve_draws(None) == (AUTO, AUTO_MAX_DRAWS)
    assert resolve_draws(None, route=SHARDS) == (FIXED_DRAWS, None)


def test_auto_is_extended_within_its_limits_or_becomes_what_the_route_can_do():
    assert resolve_draws(AUTO) == (AUTO, AUTO_MAX_DRAWS)
    assert resolve_draws(AUTO, max_draws=20) == (AUTO, 20)
    assert resolve_draws(AUTO, visits=AUTO_WORK // 1000) == (AUTO, 1000)
    assert resolve_draws(AUTO, visits=AUTO_WORK) == (AUTO, AUTO_FIRST_DRAWS)
    assert resolve_draws(AUTO, visits=1) == (AUTO, AUTO_MAX_DRAWS)
    assert resolve_draws(AUTO, route=EXACT) == (FIXED_DRAWS, None)
    with pytest.raises(AutoDrawsUnavailable, match="pass a number"):
        resolve_draws(AUTO, route=PYMC)
    with pytest.raises(ValueError, match="--draws auto.*shards"):
        resolve_draws(AUTO, route=SHARDS)


@pytest.mark.parametrize("kwargs, message", [
    ({"draws": 0}, "draws must be a whole number >= 1 or 'auto'"),
    ({"draws": 2.5}, "draws must be a whole number"),
    ({"draws": True}, "draws must be a whole number"),
    ({"draws": "many"}, "draws must be a whole number"),
    ({"draws": 5, "max_draws": 0}, "max_draws must be a whole number >= 1"),
    ({"draws": 5, "route": "nowhere"}, "route must be one of"),
])
def test_anything_else_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        resolve_draws(**kwargs)
