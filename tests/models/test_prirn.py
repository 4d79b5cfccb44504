"""IRN point estimate and the PrIRN model."""

import numpy as np
import pytest

from plausible.data import Rankings
from plausible.inference import sample
from plausible.models import prirn
from plausible.models.prirn.irn import irn, irn_scores

from dirichlet_moments import assert_matches_dirichlet


def test_irn_of_one_reader_uses_block_index_weights():
    # Reader [[A], [B, C, D]] with classes A..E: A = 1, B = C = D = 1/2, E unranked = 0.
    rankings = Rankings.from_selectors([[[[0], [1, 2, 3]]]], classes=list("ABCDE"))
    np.testing.assert_allclose(irn_scores(rankings), [[1, 0.5, 0.5, 0.5, 0]])
    np.testing.assert_allclose(irn(rankings).values, [[0.4, 0.2, 0.2, 0.2, 0]])
    assert list(irn(rankings)["class"].values) == list("ABCDE")


def test_irn_paper_variant_divides_by_block_size_and_sums_readers():
    selectors = [[[[0], [1, 2, 3]], [[2, 4], [0]]], [[[1]]]]
    rankings = Rankings.from_selectors(selectors, classes=5)
    expected_paper = np.array([[1 + 1 / 2, 1 / 6, 1 / 6 + 1 / 2, 1 / 6, 1 / 2], [0, 1, 0, 0, 0]])
    np.testing.assert_allclose(irn_scores(rankings, divide_by_block_size=True), expected_paper)
    expected_reference = np.array([[1 + 1 / 2, 1 / 2, 1 / 2 + 1, 1 / 2, 1], [0, 1, 0, 0, 0]])
    np.testing.assert_allclose(irn_scores(rankings), expected_reference)


def random_selectors(rng, n_items, n_classes):
    """Random partial rankings with ties: a random subset of classes cut into blocks."""
    cases = []
    for _ in range(n_items):
        readers = []
        for _ in range(rng.integers(1, 4)):
            named = rng.permutation(n_classes)[: rng.integers(1, n_classes)]
            n_cuts = rng.integers(0, len(named))
            cuts = np.sort(rng.choice(np.arange(1, len(named)), size=n_cuts, replace=False))
            readers.append([block.tolist() for block in np.split(named, cuts)])
        cases.append(readers)
    return cases


def test_prirn_gibbs_matches_closed_form_dirichlet():
    selectors = random_selectors(np.random.default_rng(0), n_items=30, n_classes=6)
    rankings = Rankings.from_selectors(selectors, classes=6)
    gamma, alpha = 20.0, 0.01
    trace = sample(prirn.build(rankings, reliability=gamma, alpha=alpha), draws=1000, chains=4,
                   seed=0, progressbar=False)
    draws = trace.posterior["plausibility"].stack(s=("chain", "draw")).transpose("s", ...).values
    assert_matches_dirichlet(draws, gamma * irn(rankings).values + alpha)


def test_prirn_reliability_sharpens_certainty():
    rankings = Rankings.from_selectors([[[[0], [1]], [[1], [0]], [[0, 1]]]], classes=3)
    spread = []
    for gamma in (1.0, 100.0):
        trace = sample(prirn.build(rankings, reliability=gamma), draws=500, chains=2, seed=1,
                       progressbar=False, check_convergence=False)
        spread.append(float(trace.posterior["plausibility"].std(("chain", "draw")).max()))
    assert spread[1] < spread[0] / 3


def test_prirn_rejects_invalid_reliability():
    rankings = Rankings.from_selectors([[[[0]]]], classes=2)
    with pytest.raises(ValueError, match="reliability"):
        prirn.build(rankings, reliability=-1)


def test_set_reliability_changes_the_posterior_without_rebuilding():
    from plausible.models.dirichlet import set_reliability

    rankings = Rankings.from_selectors([[[[0], [1]], [[1], [0]], [[0, 1]]]], classes=3)
    model = prirn.build(rankings, reliability=1.0)
    kwargs = dict(draws=400, chains=2, seed=1, progressbar=False, check_convergence=False)
    wide = float(sample(model, **kwargs).posterior["plausibility"].std(("chain", "draw")).max())
    set_reliability(model, 100.0)
    narrow = float(sample(model, **kwargs).posterior["plausibility"].std(("chain", "draw")).max())
    assert narrow < wide / 3
    with pytest.raises(ValueError, match="reliability"):
        set_reliability(model, 0.0)
