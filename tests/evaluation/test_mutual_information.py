"""Mutual information between noisy labels and truth (Su 2024): closed form vs enumeration."""

import numpy as np
import pytest

from plausible.evaluation.mutual_information import (
    binary_entropy, equivalent_error, labelers_to_match, mutual_information,
    symmetric_mutual_information,
)


@pytest.mark.parametrize("pi1,T,eps", [(0.2, 1, 0.1), (0.2, 5, 0.15), (0.5, 7, 0.3), (0.359, 3, 0.0)])
def test_closed_form_equals_enumeration(pi1, T, eps):
    A = np.array([[1 - eps, eps], [eps, 1 - eps]])
    assert symmetric_mutual_information(pi1, T, eps) == pytest.approx(
        mutual_information([1 - pi1, pi1], [A] * T), abs=1e-12)


def test_single_labeler_and_limits():
    pi1, e = 0.2, 0.1
    h = binary_entropy
    assert symmetric_mutual_information(pi1, 1, e) == pytest.approx(
        h(pi1 * (1 - e) + (1 - pi1) * e) - h(e))
    assert symmetric_mutual_information(pi1, 4, 0.5) == pytest.approx(0, abs=1e-12)
    assert symmetric_mutual_information(pi1, 300, 0.3) == pytest.approx(h(pi1), abs=1e-6)


def test_general_enumeration_against_direct_sum():
    rng = np.random.default_rng(0)
    pi = rng.dirichlet(np.ones(3))
    A = rng.dirichlet(np.ones(3), size=(2, 3))  # two unequal 3-class labelers
    joint = np.einsum("y,ya,yb->yab", pi, A[0], A[1])  # independent route
    pz = joint.sum(0)
    direct = np.sum(joint * np.log2(joint / (pz[None] * pi[:, None, None])))
    assert mutual_information(pi, A) == pytest.approx(direct, abs=1e-12)


def test_binary_searches():
    pi1 = 0.2
    e5 = equivalent_error(pi1, 5, 0.15)
    assert 0 < e5 < 0.15
    assert symmetric_mutual_information(pi1, 1, e5) == pytest.approx(
        symmetric_mutual_information(pi1, 5, 0.15), abs=1e-9)
    T = labelers_to_match(pi1, 0.2, 0.05)
    expert = symmetric_mutual_information(pi1, 1, 0.05)
    assert symmetric_mutual_information(pi1, T, 0.2) >= expert
    assert symmetric_mutual_information(pi1, T - 1, 0.2) < expert
    with pytest.raises(ValueError, match="do not match"):
        labelers_to_match(pi1, 0.5, 0.05)


def test_bad_input():
    with pytest.raises(ValueError, match="eps must lie"):
        symmetric_mutual_information(0.2, 3, 1.2)
    with pytest.raises(ValueError, match="positive integer"):
        symmetric_mutual_information(0.2, 0, 0.1)
    with pytest.raises(ValueError, match="sum to 1"):
        mutual_information([0.5, 0.5], [[[0.9, 0.2], [0.1, 0.9]]])
