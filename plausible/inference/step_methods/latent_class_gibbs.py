"""Exact Gibbs step for the true classes and the class prior of item-difficulty models.

The models of :mod:`plausible.models.glad` and :mod:`plausible.models.su_difficulty` share
one likelihood shape (Whitehill et al. 2009; Su 2024, "one coin per annotation, wrong labels uniform"):
annotation ``k`` (label ``x_k`` of item ``i_k`` by annotator ``j_k``) is correct with a
probability ``r_k`` that depends on the continuous parameters of the item and the
annotator (GLAD: ``r_k = sigmoid(alpha_j beta_i)``; Su: ``r_k = 1 - epsilon(delta_i,
phi_j)``), and each of the ``C - 1`` wrong classes has probability ``(1 - r_k) / (C - 1)``::

    pi ~ Dirichlet(a),   z_i ~ Categorical(pi),
    log p(x_k | z) = log r_k                    if x_k = z_{i_k}
                   = log(1 - r_k) - log(C - 1)  otherwise.

With ``L[i, c] = sum_{k: i_k = i} log p(x_k | z_i = c)``, the class posterior
``P(z_i = c | pi, r, x) = softmax_c(log pi_c + L[i, c])`` is a pytensor expression ``(item,
class)`` of the model's other variables (the model builder's:
:func:`plausible.models.latent_class.add_class_layer`), compiled once into a function of the
point and read at its current value every step. One call of :meth:`ClassGibbs.step` draws

1. ``z_i | pi, r, x ~ Categorical(P(z_i = . | pi, r, x))`` independently over items
   (inverse-CDF with one uniform per item, one compiled pass: :func:`draw_classes`);
2. ``pi | z ~ Dirichlet(a + n)`` with ``n_c = #{i: z_i = c}``.

Given the continuous parameters this is a systematic-scan Gibbs sweep of ``(z, pi)``; the
steps of the continuous parameters see ``z`` as data, so their likelihood is a plain sum
over annotations (no sum over classes).

The Dirichlet draw is written to PyMC's simplex value variable as
``log G[:-1] - mean(log G)`` with ``G_c ~ Gamma(a_c + n_c)`` (the log-ratio transform does not
need the normalisation), as in :class:`plausible.inference.step_methods.dirichlet_gibbs.DirichletGibbs`.
"""

import numba
import numpy as np
from pymc.logprob.transforms import SimplexTransform
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep
from pymc.util import get_value_vars_from_user_vars

from plausible.maths.logspace import log_gamma_draws


@numba.njit(cache=True)
def class_posterior(log_prior, L):
    """``P(z_i = c | pi, r, x) = softmax_c(log pi_c + L[i, c])``, ``(item, class)``, from
    ``log_prior`` ``(class,)`` and ``L`` ``(item, class)`` (``-inf`` entries allowed, not a
    whole row)."""
    n_items, n_classes = L.shape
    posterior = np.empty((n_items, n_classes))
    for i in range(n_items):
        top = -np.inf
        for c in range(n_classes):
            posterior[i, c] = log_prior[c] + L[i, c]
            top = max(top, posterior[i, c])
        total = 0.0
        for c in range(n_classes):
            posterior[i, c] = np.exp(posterior[i, c] - top)
            total += posterior[i, c]
        for c in range(n_classes):
            posterior[i, c] /= total
    return posterior


@numba.njit(cache=True)
def draw_classes(rng, probabilities):
    """One class per row of ``probabilities`` ``(item, class)`` (rows summing to 1) by inverse
    CDF with one uniform per item, int ``(item,)``."""
    n_items, n_classes = probabilities.shape
    classes = np.empty(n_items, dtype=np.int64)
    for i in range(n_items):
        u = rng.random()
        c = 0
        while c < n_classes - 1 and u >= probabilities[i, c]:
            u -= probabilities[i, c]
            c += 1
        classes[i] = c
    return classes


class ClassGibbs(BlockedStep):
    """Gibbs sweep over the true classes ``z`` and the class prior ``pi`` (see module).

    Parameters
    ----------
    vars : list
        ``[z, pi]``: the Categorical ``(item,)`` true classes (no transform) and the
        Dirichlet ``(class,)`` class prior on PyMC's simplex transform.
    concentration : array ``(class,)``
        Dirichlet prior ``a`` of ``pi``.
    class_probabilities : pytensor expression ``(item, class)``
        ``P(z_i = c | pi, r, x)`` in terms of the model's random variables.

    Stats: ``class_gibbs_changed``, the number of items whose class changed in the sweep.
    """

    name = "class_gibbs"
    stats_dtypes_shapes = {"class_gibbs_changed": (np.int64, [])}

    def __init__(self, vars, concentration, class_probabilities, model=None, rng=None,
                 blocked=True):
        model = modelcontext(model)
        value_vars = get_value_vars_from_user_vars(vars, model)
        if len(value_vars) != 2:
            raise ValueError("ClassGibbs updates exactly [true classes, class prior]")
        z_value, pi_value = value_vars
        pi_rv = model.values_to_rvs[pi_value]
        if not isinstance(model.rvs_to_transforms.get(pi_rv), SimplexTransform):
            raise ValueError(f"ClassGibbs needs {pi_rv.name!r} on PyMC's simplex transform")
        if model.rvs_to_transforms.get(model.values_to_rvs[z_value]) is not None:
            raise ValueError("ClassGibbs needs the true classes untransformed")
        self.concentration = np.asarray(concentration, dtype=float)
        self.n_classes = self.concentration.size
        [out] = model.replace_rvs_by_values([class_probabilities])
        self._probabilities = model.compile_fn(out, inputs=model.value_vars,
                                               on_unused_input="ignore", point_fn=True)
        self.vars = [z_value, pi_value]
        self.rng = np.random.default_rng(rng)

    def class_probabilities(self, point):
        """``P(z_i = c | pi, r, x)`` at ``point``, ``(item, class)``."""
        return self._probabilities(point)

    def draw_prior(self, classes):
        """Simplex value (log-ratio) of ``pi ~ Dirichlet(a + counts(classes))``, ``(class - 1,)``."""
        counts = np.bincount(classes, minlength=self.n_classes)
        log_g = log_gamma_draws(self.rng, self.concentration + counts)
        return log_g[:-1] - log_g.mean()

    def step(self, point):
        """PyMC's step method: the new point from ``point``, the true classes and the class
        prior drawn from their full conditionals (see the class)."""
        z_name, pi_name = (v.name for v in self.vars)
        classes = draw_classes(self.rng, self.class_probabilities(point))
        new_point = dict(point)
        new_point[z_name] = classes.astype(point[z_name].dtype)
        new_point[pi_name] = self.draw_prior(classes)
        changed = int(np.count_nonzero(classes != point[z_name]))
        return new_point, [{"class_gibbs_changed": changed}]
