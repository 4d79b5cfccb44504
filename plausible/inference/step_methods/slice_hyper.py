"""Group hyper-parameters of the annotator Beta model: their full conditional, and their
mapping to PyMC's value variables for the exact slice scan.

Group ``g`` (specificity, sensitivity, or one symmetric accuracy) has mean ``m_g`` and
scale ``s_g = u_g^(-2)``; its accuracies ``theta_gj``, ``j = 1..J_g``, are
``Beta(m_g s_g, (1 - m_g) s_g)``. The priors of :mod:`plausible.models.annotator_beta` are
uniform on ``(m, u)`` over a bounded support (``u in (0, u_max)``; ``m in (1/2, 1)`` for the
symmetric accuracy; ``(m_0, m_1)`` uniform on the half-square ``m_0 + m_1 > 1`` for
Carpenter's model), so the full conditional of the hyper-parameters depends on the data
only through the accuracies' sufficient statistics ``S1_g = sum_j log theta_gj``,
``S0_g = sum_j log(1 - theta_gj)``::

    log p(m_g, u_g | theta) = J_g [lgamma(s) - lgamma(m s) - lgamma((1 - m) s)]
                              + (m s - 1) S1_g + ((1 - m) s - 1) S0_g + const,   s = u^-2,

on the support (``-inf`` outside); the prior is constant there (the ``Beta(2, 1)`` x
``U(1 - m_1, 1)`` pair of the half-square has density 2). The sweep updates the coordinates
``m_0, u_0, m_1, u_1, ...`` in turn with Neal's (2003) univariate slice sampler (stepping
out then shrinkage; compiled in
:func:`plausible.models.annotator_beta.kernel.hyper_scan`), each update leaving the
conditional invariant given the others, so the scan is an exact Gibbs-within step — a few
scalar ``lgamma`` calls per density evaluation, instead of a NUTS trajectory.

:class:`BetaHyperValues` reads and writes PyMC's value variables: ``<name>_mean`` on its default transform
(``logodds`` for the ``Beta(2, 1)`` sensitivity mean, ``interval`` for the uniform means,
whose lower bound ``1 - m_1`` moves with the sensitivity mean) and
``<name>_scale_inv_sqrt`` on ``interval(0, u_max)``.
"""

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BetaHyperSpec:
    """Which model variables are the hyper-parameters (names of the random variables).

    ``means``, ``scales``: per group, the ``<group>_mean`` and ``<group>_scale_inv_sqrt``
    variables, in the order of the accuracy blocks they govern. ``coupling``:
    ``"half_square"`` (two groups, specificity then sensitivity; sensitivity mean on
    ``logodds``, specificity mean ``U(1 - m_1, 1)``) or ``"symmetric"`` (one group, mean
    ``U(1/2, 1)``). ``max_inv_sqrt``: ``u_max = min_scale^(-1/2)``.
    """

    means: tuple
    scales: tuple
    coupling: str
    max_inv_sqrt: float


def _logit(p):
    return math.log(p) - math.log1p(-p)


def _expit(z):
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


class BetaHyperValues:
    """Maps the hyper-parameters of :class:`BetaHyperSpec` between PyMC value variables and
    constrained ``(means, inv_sqrt_scales)``.

    ``value_names``: the PyMC value-variable names, ``(means..., scales...)``.
    """

    def __init__(self, spec: BetaHyperSpec, value_names):
        if spec.coupling not in ("half_square", "symmetric"):
            raise ValueError(f"unknown coupling {spec.coupling!r}")
        if len(spec.means) != (2 if spec.coupling == "half_square" else 1):
            raise ValueError("half_square couples two groups, symmetric has one")
        self.spec = spec
        self.n_groups = len(spec.means)
        self.mean_names = list(value_names[: self.n_groups])
        self.scale_names = list(value_names[self.n_groups:])

    def read(self, point) -> tuple[list, list]:
        """Constrained ``(means, inv_sqrt_scales)``, lists of floats, from value variables."""
        if self.spec.coupling == "half_square":
            m1 = _expit(float(point[self.mean_names[1]]))
            m0 = (1.0 - m1) + m1 * _expit(float(point[self.mean_names[0]]))
            means = [m0, m1]
        else:
            means = [0.5 + 0.5 * _expit(float(point[self.mean_names[0]]))]
        u_max = self.spec.max_inv_sqrt
        inv_sqrt = [u_max * _expit(float(point[name])) for name in self.scale_names]
        return means, inv_sqrt

    def write(self, means, inv_sqrt) -> dict:
        """Value variables ``{name: 0-d array}`` of constrained ``(means, inv_sqrt_scales)``."""
        if self.spec.coupling == "half_square":
            m0, m1 = means
            lower = 1.0 - m1
            values = {self.mean_names[0]: math.log(m0 - lower) - math.log(1.0 - m0),
                      self.mean_names[1]: _logit(m1)}
        else:
            values = {self.mean_names[0]: math.log(means[0] - 0.5) - math.log(1.0 - means[0])}
        u_max = self.spec.max_inv_sqrt
        for name, u in zip(self.scale_names, inv_sqrt):
            values[name] = math.log(u) - math.log(u_max - u)
        return {name: np.asarray(value, dtype=float) for name, value in values.items()}

    @staticmethod
    def beta_priors(means, inv_sqrt) -> list:
        """``[(alpha_g, beta_g)]`` of the groups' Beta priors on the accuracies."""
        return [(m * u**-2, (1.0 - m) * u**-2) for m, u in zip(means, inv_sqrt)]
