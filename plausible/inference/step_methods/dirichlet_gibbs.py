"""Exact Gibbs step for a Dirichlet variable with a pseudo-count (multinomial-type) likelihood.

Prior ``lambda_i ~ Dirichlet(alpha)`` and log-likelihood ``gamma * sum_c s_ic log lambda_ic``
give the full conditional ``lambda_i ~ Dirichlet(alpha + gamma * s_i)``, independently
over items ``i``. The step draws it directly, vectorised over all items.

Draws are made on the log scale (:func:`plausible.maths.logspace.log_gamma_draws`, exact
and finite even when ``a`` is tiny, ``alpha = 0.01`` in PrIRN, where ``Gamma(a)`` itself
underflows to 0 often enough to break the log-ratio transform). The Dirichlet draw is
``softmax(log G)``.

Every draw is independent of the chain's state (the concentration is fixed), so the step also
draws whole batches at once for :func:`plausible.sample`'s exact route
(:mod:`plausible.inference.exact`): dense (:meth:`DirichletGibbs.draw_values`) or, when the
classes with no pseudo-count share one prior concentration, in the candidate form of
:mod:`plausible.metrics.storage` (:meth:`DirichletGibbs.candidate_form`,
:meth:`DirichletGibbs.draw_candidates`).
"""

from dataclasses import dataclass


import numpy as np
import pytensor
from pymc.logprob.transforms import SimplexTransform
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep
from pymc.util import get_value_vars_from_user_vars

from plausible.inference.step_methods.dirichlet_draws import candidate_draws, dense_draws
from plausible.maths.logspace import log_gamma_draws


@dataclass(frozen=True)
class CandidateForm:
    """The candidate layout of a Dirichlet posterior: per item the classes with a positive
    pseudo-count (``candidate_class (item, width)``, -1 padding after them) with their
    concentrations ``candidate_shape (item, width)``, and the ``n_pooled (item,)`` others,
    whose common concentration sums to ``pool_shape (item,)``."""

    candidate_class: np.ndarray
    candidate_shape: np.ndarray
    n_pooled: np.ndarray
    pool_shape: np.ndarray

    @property
    def width(self) -> int:
        return self.candidate_class.shape[1]


class DirichletGibbs(BlockedStep):
    """Draw a Dirichlet variable from its conjugate full conditional.

    Parameters
    ----------
    vars : list
        One Dirichlet random variable (or its value variable), batch shape ``(item,)``,
        support ``(class,)``, with PyMC's default simplex transform.
    concentration : pytensor expression
        Posterior concentration ``alpha + gamma * s`` broadcastable to the variable's
        shape; evaluated once, when the step is built (it may read ``pm.Data``).
    pseudo_counts : pytensor expression, optional
        ``s``, same shape: its zeros are the classes that may be pooled in candidate form.
    """

    name = "dirichlet_gibbs"
    stats_dtypes_shapes = {}
    independent = True
    """Every draw is an exact posterior draw, independent of the chain's state."""

    def __init__(self, vars, concentration, pseudo_counts=None, model=None, rng=None,
                 blocked=True):
        model = modelcontext(model)
        value_vars = get_value_vars_from_user_vars(vars, model)
        if len(value_vars) != 1:
            raise ValueError("DirichletGibbs updates exactly one Dirichlet variable")
        [value_var] = value_vars
        rv = model.values_to_rvs[value_var]
        transform = model.rvs_to_transforms.get(rv)
        if not isinstance(transform, SimplexTransform):
            raise ValueError(
                f"DirichletGibbs needs {rv.name!r} on PyMC's simplex transform, got {transform!r}"
            )
        shape = tuple(model.initial_point()[value_var.name].shape[:-1]) + (
            int(rv.shape[-1].eval()),
        )
        concentration = np.broadcast_to(
            pytensor.function([], concentration, mode="FAST_COMPILE")(), shape
        ).copy()
        if not np.all(np.isfinite(concentration) & (concentration > 0)):
            raise ValueError(f"posterior concentration of {rv.name!r} must be finite and > 0")
        self.vars = [value_var]
        self.rv_name = rv.name
        self.concentration = concentration
        self.pseudo_counts = None if pseudo_counts is None else np.broadcast_to(
            pytensor.function([], pseudo_counts, mode="FAST_COMPILE")(), shape)
        self.rng = np.random.default_rng(rng)

    def step(self, point):
        """PyMC's step method: the new point from ``point``, the Dirichlet variable drawn from
        its conjugate full conditional (see the class)."""
        log_weights = log_gamma_draws(self.rng, self.concentration)
        # PyMC's simplex transform is the log-ratio  log(x[:-1]) - mean(log x); it is
        # invariant to the normalising constant, so it is computed from log G directly.
        value = log_weights[..., :-1] - log_weights.mean(axis=-1, keepdims=True)
        new_point = dict(point)
        new_point[self.vars[0].name] = value
        return new_point, [{}]

    def draw_values(self, rng: np.random.Generator, out: dict[str, np.ndarray]) -> None:
        """Fill ``out[name] (draw, item, class)`` (float64, C-contiguous) with independent
        exact draws."""
        dense_draws(rng, self.concentration, out[self.rv_name])

    def candidate_form(self) -> CandidateForm | None:
        """The candidate layout of the posterior (see :class:`CandidateForm`), or None when
        the step has no pseudo-counts or the classes without one differ in concentration (so
        they are not exchangeable)."""
        if self.pseudo_counts is None or self.concentration.ndim != 2:
            return None
        named = self.pseudo_counts > 0
        low = np.where(named, np.inf, self.concentration).min(axis=1)
        high = np.where(named, -np.inf, self.concentration).max(axis=1)
        n_pooled = (~named).sum(axis=1)
        if not np.all((n_pooled == 0) | (low == high)):
            return None
        width = max(int(named.sum(axis=1).max(initial=0)), 1)
        order = np.argsort(~named, axis=1, kind="stable")[:, :width]  # named classes first
        candidate = np.take_along_axis(named, order, axis=1)
        return CandidateForm(
            candidate_class=np.where(candidate, order, -1),
            candidate_shape=np.where(candidate,
                                     np.take_along_axis(self.concentration, order, axis=1), 0.0),
            n_pooled=n_pooled,
            pool_shape=np.where(n_pooled > 0, n_pooled * np.where(n_pooled > 0, low, 0.0), 0.0),
        )

    def draw_candidates(self, rng: np.random.Generator, form: CandidateForm, values: np.ndarray,
                        pooled: np.ndarray) -> None:
        """Fill ``values (draw, item, width)`` and ``pooled (draw, item)`` (any float dtype)
        with independent exact draws in the candidate ``form``."""
        n_candidates = (form.candidate_class >= 0).sum(axis=1)
        candidate_draws(rng, form.candidate_shape, n_candidates, form.pool_shape, values, pooled)
