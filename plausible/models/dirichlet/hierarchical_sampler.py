"""Compiled sampler of the hierarchical Dirichlet model for votes
(:func:`plausible.models.dirichlet.build_hierarchical`).

Item ``i``'s plausibilities ``lambda_i ~ Dirichlet(alpha)`` with ``alpha = kappa mu`` learned
from all items: ``kappa ~ Gamma(s, r)`` and the base measure ``mu ~ Dirichlet(beta)`` (or
fixed uniform), the votes ``s_i`` entering with reliability ``gamma``. Each sweep is

1. ``(kappa, mu) | s`` with every item's ``lambda_i`` integrated out, the rows ``gamma s_i``
   of a Dirichlet-multinomial population
   (:mod:`plausible.inference.step_methods.dirichlet_multinomial_population`: slice scan plus the exact
   scale of the base measure's Gamma weights);
2. ``lambda_i | kappa, mu, s ~ Dirichlet(kappa mu + gamma s_i)`` exactly, for every item
   (:func:`plausible.inference.step_methods.dirichlet_draws.dense_draws`), at kept sweeps only — the
   population's chain does not read the plausibilities, so skipping their draw elsewhere
   changes nothing.

A partially collapsed Gibbs sampler: each kept ``(kappa, mu, lambda)`` is a draw of the
joint posterior once the population's chain has mixed. The sweep is compiled (numba, GIL
released); :class:`HierarchicalDirichletKernel` is its kernel
(:mod:`plausible.inference.kernel`), run by the driver (chains in threads, seeds, warm-up,
the trace) or by PyMC.

The trace: ``posterior`` with ``concentration (chain, draw)``, ``base_measure (chain, draw,
class)`` and ``plausibility (chain, draw, item, class)`` (dense, ``dtype``).
"""

from __future__ import annotations

import numba
import numpy as np

from plausible.inference.step_methods.dirichlet_draws import dense_draws
from plausible.inference.step_methods.dirichlet_multinomial_population import count_summary, draw_population
from plausible.inference.kernel import PyMCKernel, Variable
from plausible.maths.logspace import log_gamma_draw

DEFAULT_TUNE = 200
"""Warm-up sweeps: the population's few coordinates settle within tens of sweeps."""
WIDTH = 1.0
"""Slice width on the log scale of ``kappa`` and of the base measure's weights."""
DISPERSION = 1.0
"""Half-width of the uniform jitter of each chain's start on those log scales."""


@numba.njit(nogil=True, cache=True)
def _record(rng, log_alpha, counts, base_out, plaus_out):  # pragma: no cover - compiled
    """Write ``mu`` into ``base_out (class,)`` and ``lambda | alpha`` into ``plaus_out (1,
    item, class)``; return ``kappa``."""
    alpha = np.exp(log_alpha)
    kappa = alpha.sum()
    base_out[:] = alpha / kappa
    dense_draws(rng, alpha + counts, plaus_out)
    return kappa


class HierarchicalDirichletKernel(PyMCKernel):
    """The sweep of the module for tempered vote counts ``gamma s (item, class)``.

    ``base_prior beta (class,)``; ``concentration_prior`` Gamma ``(shape, rate)`` of
    ``kappa``; ``learn_base`` False keeps the base measure at ``start``'s; ``start (1 +
    class)`` the chains' ``(log kappa, log g)`` before each chain's jitter. State: ``v = (log
    kappa, log g)``, the population's coordinates (``g`` the base measure's unnormalised
    Gamma weights, an augmentation whose scale every sweep draws afresh).
    """

    name = "plausible.models.dirichlet.hierarchical_sampler"
    default_tune = DEFAULT_TUNE
    default_thin = 1
    stats = {}

    def __init__(self, tempered, *, base_prior, concentration_prior, learn_base: bool, start,
                 dtype=np.float32):
        self.tempered = np.ascontiguousarray(tempered, dtype=np.float64)
        self.summary = count_summary(self.tempered)
        self.beta = np.asarray(base_prior, dtype=np.float64)
        self.shape, self.rate = (float(x) for x in concentration_prior)
        self.learn_base = bool(learn_base)
        self.start_point = np.asarray(start, dtype=np.float64)
        n_items, n_classes = self.tempered.shape
        self.variables = {
            "concentration": Variable((), ()),
            "base_measure": Variable(("class",), (n_classes,)),
            "plausibility": Variable(("item", "class"), (n_items, n_classes), dtype)}

    def start(self, rng):
        """``start`` jittered by ``U(-1, 1)`` on each coordinate that moves."""
        v = self.start_point
        return v + rng.uniform(-DISPERSION, DISPERSION, v.size) * (
            np.arange(v.size) < (v.size if self.learn_base else 1))

    def load(self, values, rng):
        """``(log kappa, log g)``: with a learned base, ``g = S mu`` with the scale ``S ~
        Gamma(sum beta, 1)`` drawn from its conditional given ``mu`` (its prior); a fixed base
        keeps the start's."""
        log_kappa = np.log(float(values["concentration"]))
        if not self.learn_base:
            return np.concatenate([[log_kappa], self.start_point[1:]])
        log_g = np.log(np.asarray(values["base_measure"], dtype=np.float64))
        return np.concatenate([[log_kappa], log_g + log_gamma_draw(rng, self.beta.sum())])

    def to_point(self, state, draw):
        names = ("concentration", "plausibility") + (("base_measure",) if self.learn_base else ())
        return {name: draw[name] for name in names}

    def sweep(self, rng, v, out):
        """``(kappa, mu) | s`` (slice, items integrated out), then at kept sweeps ``lambda |
        kappa, mu, s`` (the population's chain does not read it)."""
        log_alpha = draw_population(rng, v, self.summary, self.learn_base, self.beta,
                                    self.shape, self.rate, WIDTH)
        if out is not None:
            out["concentration"][...] = _record(rng, log_alpha, self.tempered,
                                                out["base_measure"], out["plausibility"][None])
        return v


__all__ = ["HierarchicalDirichletKernel"]
