import numpy as np
import pytest

from plausible.data import TOY_CLASSES, simulate_toy, toy_examples, toy_posterior


def test_simulate_toy_shapes_and_probabilities():
    toy = simulate_toy(n_items=300, n_annotators=7, seed=1)
    assert toy.x.shape == toy.true_class.shape == (300,)
    assert toy.true_probs.shape == toy.votes.counts.shape == (300, 3)
    np.testing.assert_allclose(toy.true_probs.sum(axis=1), 1.0)
    assert (toy.true_probs >= 0).all()
    np.testing.assert_array_equal(toy.votes.counts.sum(axis=1), 7)
    np.testing.assert_array_equal(toy.votes.classes, TOY_CLASSES)
    np.testing.assert_allclose(toy_posterior(toy.x), toy.true_probs)


def test_simulate_toy_is_reproducible():
    a, b, c = simulate_toy(seed=3), simulate_toy(seed=3), simulate_toy(seed=4)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.votes.counts, b.votes.counts)
    assert not np.array_equal(a.x, c.x)


def test_votes_follow_true_probabilities():
    toy = simulate_toy(n_items=2000, n_annotators=50, seed=0)
    frequency = toy.votes.counts / 50
    assert np.abs(frequency - toy.true_probs).mean() < 0.05


def test_toy_examples_order_by_entropy():
    toy = simulate_toy(seed=0)
    picks = toy_examples(toy)
    p = toy.true_probs[[picks["crisp"], picks["in_between"], picks["ambiguous"]]]
    entropy = -(p * np.log(np.clip(p, 1e-300, None))).sum(axis=1)
    assert entropy[0] < entropy[1] < entropy[2]
    assert p[0].max() > 0.99 and p[2].max() < 0.6


def test_invalid_sizes():
    with pytest.raises(ValueError, match="n_annotators >= 1"):
        simulate_toy(n_annotators=0)
