"""Mixture draws of a stacked posterior (:mod:`plausible.inference.stacking`)."""

import dask.array as da
import numpy as np
import pytest
import xarray as xr

from plausible.inference.stacking import mixture_draws, slot_counts


def labelled(offset: float, chains=3, draws=50, items=4, classes=2) -> xr.DataArray:
    """Draws whose value names their model, chain and draw: ``offset + 1000 chain + draw``
    in every element, so a mixed draw says where it came from."""
    values = (offset + 1000 * np.arange(chains)[:, None] + np.arange(draws)[None, :])
    values = np.broadcast_to(values[:, :, None, None], (chains, draws, items, classes))
    return xr.DataArray(values.copy(), dims=("chain", "draw", "item", "class"),
                        coords={"chain": np.arange(chains), "draw": np.arange(draws),
                                "item": [f"i{k}" for k in range(items)],
                                "class": ["a", "b"][:classes]})


@pytest.mark.parametrize("weights, slots, expected", [
    ([0.5, 0.5], 7, [4, 3]), ([0.2, 0.3, 0.5], 10, [2, 3, 5]), ([0.34, 0.66], 100, [34, 66]),
    ([0.335, 0.665], 100, [34, 66]), ([1.0], 5, [5])])
def test_slot_counts_round_by_largest_remainder(weights, slots, expected):
    assert slot_counts(np.array(weights), slots).tolist() == expected


def test_each_chain_takes_each_models_share_of_its_own_chain_without_repeats():
    draws = {"m": labelled(0.0, draws=50), "n": labelled(0.5, draws=80)}
    mixed = mixture_draws(draws, {"m": 0.3, "n": 0.7}, np.random.default_rng(0))
    assert mixed.dims == ("chain", "draw", "item", "class") and mixed.sizes["draw"] == 50
    assert list(mixed["item"].values) == list(draws["m"]["item"].values)
    values = mixed.values[:, :, 0, 0]
    assert (mixed.values == values[:, :, None, None]).all()  # whole draws, not elements
    for chain in range(3):
        row = values[chain]
        from_n = (row % 1) == 0.5
        assert from_n.sum() == 35 and (~from_n).sum() == 15  # 0.7 and 0.3 of 50 draws
        assert ((row // 1000) == chain).all()  # each chain from the same chain
        assert np.unique(row).size == 50  # no draw taken twice
    assert not (np.diff(values[0][(values[0] % 1) == 0.5]) > 0).all()  # shuffled, not blocks
    again = mixture_draws(draws, {"m": 0.3, "n": 0.7}, np.random.default_rng(0))
    np.testing.assert_array_equal(again.values, mixed.values)


def test_lazy_draws_stay_lazy_and_mismatched_models_are_refused():
    plain = labelled(0.0)
    lazy = plain.copy(data=da.from_array(plain.values, chunks=(1, 25, 4, 2)))
    mixed = mixture_draws({"m": lazy, "n": labelled(0.5)}, {"m": 0.5, "n": 0.5},
                          np.random.default_rng(1))
    assert isinstance(mixed.data, da.Array)
    assert np.isin(mixed.values, np.concatenate([plain.values, plain.values + 0.5])).all()
    with pytest.raises(ValueError, match="different chains or coordinates"):
        mixture_draws({"m": plain, "n": labelled(0.5, items=5)}, {"m": 0.5, "n": 0.5},
                      np.random.default_rng(1))
