"""Exact Gibbs step for the true classes and the class prior of item-difficulty models.

The models of :mod:`plausible.models.glad` and :mod:`plausible.models.su_difficulty` share
one likelihood shape (spec 02 §2, "one coin per annotation, wrong labels uniform"):
annotation ``k`` (label ``x_k`` of item ``i_k`` by annotator ``j_k``) is correct with a
probability ``r_k`` that depends on the continuous parameters of the item and the
annotator (GLAD: ``r_k = sigmoid(alpha_j beta_i)``; Su: ``r_k = 1 - epsilon(delta_i,
phi_j)``), and each of the ``C - 1`` wrong classes has probability ``(1 - r_k) / (C - 1)``::

    pi ~ Dirichlet(a),   z_i ~ Categorical(pi),
    log p(x_k | z) = log r_k                    if x_k = z_{i_k}
                   = log(1 - r_k) - log(C - 1)  otherwise.

With ``L[i, c] = sum_{k: i_k = i} log p(x_k | z_i = c)`` (:func:`class_log_likelihoods`,
one ``np.bincount`` over annotations) one call of :meth:`ClassGibbs.step` draws

1. ``z_i | pi, r, x ~ Categorical(softmax_c(log pi_c + L[i, c]))`` independently over items
   (inverse-CDF with one uniform per item);
2. ``pi | z ~ Dirichlet(a + n)`` with ``n_c = #{i: z_i = c}``.

Given the continuous parameters this is a systematic-scan Gibbs sweep of ``(z, pi)``; the
continuous parameters (NUTS) see ``z`` as data, so the likelihood NUTS differentiates is a
plain sum over annotations (no sum over classes). ``log r_k`` and ``log(1 - r_k)`` are
pytensor expressions of the model's other variables, compiled once into a function of the
point and read at their current values every step.

The Dirichlet draw is written to PyMC's simplex value variable as
``log G[:-1] - mean(log G)`` with ``G_c ~ Gamma(a_c + n_c)`` (the log-ratio transform does not
need the normalisation), as in :class:`plausible.inference.dirichlet_gibbs.DirichletGibbs`.
"""

import numpy as np
import pytensor.tensor as pt
from pymc.logprob.transforms import SimplexTransform
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep
from pymc.util import get_value_vars_from_user_vars
from scipy.special import log_softmax

from plausible.inference.dirichlet_gibbs import log_gamma_draws


def class_log_likelihoods(item, label, n_items, n_classes, log_correct, log_incorrect):
    """``L[i, c] = sum_{k: i_k = i} log p(x_k | z_i = c)``, shape ``(item, class)``.

    ``log_correct`` ``(annotation,)``: ``log r_k``; ``log_incorrect`` ``(annotation,)``:
    ``log(1 - r_k)`` (the ``- log(C - 1)`` of a specific wrong class is added here). One
    ``bincount`` over (item, class) codes of the ``(annotation, class)`` terms, so a
    perfect label (``log(1 - r_k) = -inf``) gives ``-inf``, never ``nan``.
    """
    log_correct = np.asarray(log_correct, dtype=float)
    wrong = np.asarray(log_incorrect, dtype=float) - np.log(n_classes - 1)
    classes = np.arange(n_classes)
    terms = np.where(label[:, None] == classes, log_correct[:, None], wrong[:, None])
    codes = item[:, None] * n_classes + classes
    return np.bincount(codes.ravel(), weights=terms.ravel(),
                       minlength=n_items * n_classes).reshape(n_items, n_classes)


def class_posterior(log_prior, L):
    """``P(z_i = c | pi, r, x) = softmax_c(log pi_c + L[i, c])``, ``(..., item, class)``."""
    return np.exp(log_softmax(np.asarray(log_prior)[..., None, :] + L, axis=-1))


def draw_categorical(rng: np.random.Generator, probabilities) -> np.ndarray:
    """One class per row of ``probabilities`` ``(n, class)`` by inverse CDF, int ``(n,)``."""
    cdf = np.cumsum(probabilities, axis=-1)
    u = rng.random(cdf.shape[:-1]) * cdf[..., -1]
    return np.minimum((cdf < u[..., None]).sum(axis=-1), cdf.shape[-1] - 1)


class ClassGibbs(BlockedStep):
    """Gibbs sweep over the true classes ``z`` and the class prior ``pi`` (see module).

    Parameters
    ----------
    vars : list
        ``[z, pi]``: the Categorical ``(item,)`` true classes (no transform) and the
        Dirichlet ``(class,)`` class prior on PyMC's simplex transform.
    item, label : int arrays ``(annotation,)``
        The long labels (``label`` in ``0 .. C - 1``).
    concentration : array ``(class,)``
        Dirichlet prior ``a`` of ``pi``.
    log_correct, log_incorrect : pytensor expressions ``(annotation,)``
        ``log r_k`` and ``log(1 - r_k)`` in terms of the model's random variables.

    Stats: ``class_gibbs_changed``, the number of items whose class changed in the sweep.
    """

    name = "class_gibbs"
    stats_dtypes_shapes = {"class_gibbs_changed": (np.int64, [])}

    def __init__(self, vars, item, label, concentration, log_correct, log_incorrect,
                 model=None, rng=None, blocked=True):
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
        self.item = np.asarray(item, dtype=np.int64)
        self.label = np.asarray(label, dtype=np.int64)
        self.concentration = np.asarray(concentration, dtype=float)
        self.n_classes = self.concentration.size
        self.n_items = int(model.initial_point()[z_value.name].size)
        outs = model.replace_rvs_by_values([pt.log(pi_rv), log_correct, log_incorrect])
        self._parameters = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore",
                                            point_fn=True)
        self.vars = [z_value, pi_value]
        self.rng = np.random.default_rng(rng)

    def class_probabilities(self, point):
        """``P(z_i = c | pi, r, x)`` at ``point``, ``(item, class)``."""
        log_pi, log_correct, log_incorrect = self._parameters(point)
        L = class_log_likelihoods(self.item, self.label, self.n_items, self.n_classes,
                                  log_correct, log_incorrect)
        return class_posterior(log_pi, L)

    def draw_prior(self, classes):
        """Simplex value (log-ratio) of ``pi ~ Dirichlet(a + counts(classes))``, ``(class - 1,)``."""
        counts = np.bincount(classes, minlength=self.n_classes)
        log_g = log_gamma_draws(self.rng, self.concentration + counts)
        return log_g[:-1] - log_g.mean()

    def step(self, point):
        z_name, pi_name = (v.name for v in self.vars)
        classes = draw_categorical(self.rng, self.class_probabilities(point))
        new_point = dict(point)
        new_point[z_name] = classes.astype(point[z_name].dtype)
        new_point[pi_name] = self.draw_prior(classes)
        changed = int(np.count_nonzero(classes != point[z_name]))
        return new_point, [{"class_gibbs_changed": changed}]
