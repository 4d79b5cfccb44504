"""Exact Gibbs step for per-item Normal–Inverse-Gamma parameters ``(mu, sigma2)``.

Given everything else in the model (hyper-parameters, annotator offsets, reliability),
the full conditional of each item's ``(mu_i, sigma2_i)`` is NIG (Stutz et al. 2023;
:mod:`plausible.models.ratings.nig`)::

    sigma2_i ~ InvGamma(alpha_n,i, beta_n,i),   mu_i | sigma2_i ~ N(mu_n,i, sigma2_i / kappa_n,i)

independently over items. The model builder hands the step the four posterior parameters
as pytensor expressions of the model's other variables; the step compiles one function of
the point in ``__init__`` (random variables replaced by their value variables through their
transforms, e.g. ``kappa0 = exp(kappa0_log__)``) and evaluates it at every step, so hyper-
parameters that NUTS moves are read at their *current* values. With fixed hyper-parameters
the function is a constant and every draw is an exact, independent posterior draw: the step is
then ``independent`` and draws whole batches (:meth:`NIGGibbs.draw_values`) for
:func:`plausible.sample`'s exact route.

Draws are made on the log scale, ``log sigma2 = log beta_n - log G`` with
``G ~ Gamma(alpha_n)`` (finite for tiny shapes, :func:`plausible.maths.logspace.log_gamma_draws`), and written
to ``sigma2``'s value variable (``sigma2_log__`` under PyMC's default log transform).
"""

import numpy as np
import pytensor.tensor as pt
from pymc.logprob.transforms import LogTransform
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep
from pymc.util import get_value_vars_from_user_vars
from pytensor.graph.traversal import ancestors

from plausible.maths.logspace import log_gamma_draws


def draw_nig_log(rng: np.random.Generator, kappa_n, mu_n, alpha_n, beta_n, size=None):
    """Exact NIG draws ``(mu, log sigma2)``, float64 arrays of shape ``size`` (default the
    broadcast shape of the parameters, which broadcast against ``size``)."""
    params = np.broadcast_arrays(*(np.asarray(p, dtype=np.float64) for p in (kappa_n, mu_n, alpha_n, beta_n)))
    shape = params[0].shape if size is None else tuple(np.atleast_1d(size))
    kappa_n, mu_n, alpha_n, beta_n = (np.broadcast_to(p, shape) for p in params)
    log_sigma2 = np.log(beta_n) - log_gamma_draws(rng, np.array(alpha_n))
    mu = mu_n + np.exp(0.5 * (log_sigma2 - np.log(kappa_n))) * rng.standard_normal(shape)
    return mu, log_sigma2


def draw_nig(rng: np.random.Generator, kappa_n, mu_n, alpha_n, beta_n, size=None):
    """Exact NIG draws ``(mu, sigma2)`` (see :func:`draw_nig_log`)."""
    mu, log_sigma2 = draw_nig_log(rng, kappa_n, mu_n, alpha_n, beta_n, size)
    return mu, np.exp(log_sigma2)


class NIGGibbs(BlockedStep):
    """Draw per-item ``(mu, sigma2)`` from their conjugate NIG full conditional.

    Parameters
    ----------
    vars : list
        ``[mu, sigma2]`` in this order (random or value variables), batch shape ``(item,)``;
        ``mu`` untransformed, ``sigma2`` untransformed or on PyMC's log transform.
    posterior : tuple of 4 pytensor expressions
        ``(kappa_n, mu_n, alpha_n, beta_n)`` broadcastable to ``(item,)``; functions of the
        model's other random variables and data, never of ``mu`` or ``sigma2``.
    """

    name = "nig_gibbs"
    stats_dtypes_shapes = {}

    def __init__(self, vars, posterior, model=None, rng=None, blocked=True):
        model = modelcontext(model)
        value_vars = get_value_vars_from_user_vars(vars, model)
        if len(value_vars) != 2:
            raise ValueError("NIGGibbs updates exactly two variables: [mu, sigma2]")
        mu_value, sigma2_value = value_vars
        mu_rv, sigma2_rv = (model.values_to_rvs[v] for v in value_vars)
        if model.rvs_to_transforms.get(mu_rv) is not None:
            raise ValueError(f"NIGGibbs needs {mu_rv.name!r} untransformed")
        transform = model.rvs_to_transforms.get(sigma2_rv)
        if transform is not None and not isinstance(transform, LogTransform):
            raise ValueError(
                f"NIGGibbs needs {sigma2_rv.name!r} untransformed or log-transformed, got {transform!r}"
            )
        if len(posterior) != 4:
            raise ValueError("posterior must be (kappa_n, mu_n, alpha_n, beta_n)")
        outs = model.replace_rvs_by_values([pt.as_tensor_variable(p) for p in posterior])
        depends_on = set(ancestors(outs)) & set(model.value_vars)
        if {mu_value, sigma2_value} & depends_on:
            raise ValueError("the NIG posterior parameters must not depend on mu or sigma2 themselves")
        self._posterior = model.compile_fn(
            outs, inputs=model.value_vars, on_unused_input="ignore", point_fn=True
        )
        self.independent = not depends_on
        self.fixed_posterior = self._posterior(model.initial_point()) if self.independent else None
        self.rv_names = (mu_rv.name, sigma2_rv.name)
        self.n_items = model.initial_point()[mu_value.name].shape
        self.log_sigma2 = transform is not None
        self.vars = [mu_value, sigma2_value]
        self.rng = np.random.default_rng(rng)

    def step(self, point):
        """PyMC's step method: the new point from ``point``, every item's ``(mu, sigma2)`` drawn
        from its NIG full conditional (see the class)."""
        kappa_n, mu_n, alpha_n, beta_n = self._posterior(point)
        mu, log_sigma2 = draw_nig_log(self.rng, kappa_n, mu_n, alpha_n, beta_n, self.n_items)
        new_point = dict(point)
        new_point[self.vars[0].name] = mu
        new_point[self.vars[1].name] = log_sigma2 if self.log_sigma2 else np.exp(log_sigma2)
        return new_point, [{}]

    def draw_values(self, rng: np.random.Generator, out: dict[str, np.ndarray]) -> None:
        """Fill ``out[mu] (draw, item)`` and ``out[sigma2] (draw, item)`` with independent
        exact draws; only for an ``independent`` step (fixed hyper-parameters)."""
        if not self.independent:
            raise ValueError("the NIG posterior depends on sampled variables: draws are not independent")
        kappa_n, mu_n, alpha_n, beta_n = self.fixed_posterior
        n_draws = out[self.rv_names[0]].shape[0]
        drawn = draw_nig(rng, kappa_n, mu_n, alpha_n, beta_n, (n_draws, *self.n_items))
        for name, value in zip(self.rv_names, drawn):
            out[name][...] = value
