"""Exact Gibbs step for annotators' confusion matrices given the true classes (Dawid–Skene).

Annotator ``j``'s confusion matrix has rows ``theta_j[c] ~ Dirichlet(beta_c)`` (the
distribution of ``j``'s label when the true class is ``c``); annotation ``k`` (label ``x_k``
of item ``i_k`` by annotator ``j_k``) enters with reliability ``gamma``::

    log p(x | z, theta) = gamma sum_k log theta_{j_k}[z_{i_k}, x_k]

Given the classes ``z`` the rows are independent and conjugate:

    theta_j[c] | z, x ~ Dirichlet(beta_c + gamma n_j[c, :]),
    n_j[c, x] = #{k: j_k = j, z_{i_k} = c, x_k = x},

drawn for every annotator and row at once (one ``bincount`` of the codes ``(j C + c) C + x``
and one vector of Gamma draws). The draw is written to PyMC's simplex value variable as
``log G[..., :-1] - mean(log G)`` (:class:`~plausible.inference.dirichlet_gibbs.DirichletGibbs`
explains the transform).
"""

import numpy as np
from pymc.logprob.transforms import SimplexTransform
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep
from pymc.util import get_value_vars_from_user_vars

from plausible.maths.logspace import log_gamma_draws


class GivenClasses(BlockedStep):
    """Common part of the steps that draw annotator parameters given the true classes: the
    labels ``item``, ``annotator``, ``label`` (int ``(annotation,)``), the reliability, the
    name of the classes' value variable and the generator."""

    stats_dtypes_shapes = {}

    def _given(self, vars, model, true_class, item, annotator, label, reliability, rng):
        """Store the labels and the rest; return the model and the value variables of
        ``vars``."""
        model = modelcontext(model)
        self.item, self.annotator, self.label = (np.asarray(a, dtype=np.int64)
                                                 for a in (item, annotator, label))
        self.reliability = float(reliability)
        self.z_name = model.rvs_to_values[true_class].name
        self.rng = np.random.default_rng(rng)
        return model, get_value_vars_from_user_vars(vars, model)

    def classes(self, point) -> np.ndarray:
        """The true classes at ``point``, int64 ``(item,)``."""
        return np.asarray(point[self.z_name], dtype=np.int64)


class ConfusionRowsGibbs(GivenClasses):
    """Draws every confusion row from its Dirichlet full conditional (see module).

    Parameters
    ----------
    vars : list
        ``[confusion]``: Dirichlet ``(annotator, class, class)`` on PyMC's simplex transform.
    true_class : random variable
        The Categorical ``(item,)`` true classes (read from the point).
    item, annotator, label : int arrays ``(annotation,)``
        The labels.
    prior : array ``(class, class)`` or pytensor expression
        ``beta``: row ``c`` is the Dirichlet concentration of every annotator's row ``c``; an
        expression of the model's variables (broadcasting to ``(annotator, class, class)``,
        e.g. a hierarchical ``kappa_c mu_c``) is read at the current point every step.
    reliability : float
        ``gamma > 0``.
    """

    name = "confusion_rows_gibbs"

    def __init__(self, vars, true_class, item, annotator, label, prior, reliability=1.0,
                 model=None, rng=None, blocked=True):
        model, [value] = self._given(vars, model, true_class, item, annotator, label,
                                     reliability, rng)
        rv = model.values_to_rvs[value]
        if not isinstance(model.rvs_to_transforms.get(rv), SimplexTransform):
            raise ValueError(f"ConfusionRowsGibbs needs {rv.name!r} on PyMC's simplex transform")
        self.n_annotators, self.n_classes = (int(n) for n in rv.shape.eval()[:2])
        if isinstance(prior, np.ndarray | list | tuple):
            fixed = np.asarray(prior, dtype=float)
            self._prior = lambda point: fixed
        else:
            [out] = model.replace_rvs_by_values([prior])
            self._prior = model.compile_fn(out, inputs=model.value_vars,
                                           on_unused_input="ignore", point_fn=True)
        self.vars = [value]

    def counts(self, classes: np.ndarray) -> np.ndarray:
        """``n (annotator, class, class)``: labels per annotator, true class and label."""
        C = self.n_classes
        codes = (self.annotator * C + classes[self.item]) * C + self.label
        return np.bincount(codes, minlength=self.n_annotators * C * C).reshape(
            self.n_annotators, C, C)

    def draw(self, classes: np.ndarray, prior: np.ndarray) -> np.ndarray:
        """Log-ratio simplex values of ``theta | z`` given the row concentrations ``prior``,
        ``(annotator, class, class - 1)``."""
        log_g = log_gamma_draws(self.rng, np.broadcast_to(
            prior + self.reliability * self.counts(classes),
            (self.n_annotators, self.n_classes, self.n_classes)))
        return log_g[..., :-1] - log_g.mean(axis=-1, keepdims=True)

    def step(self, point):
        new_point = dict(point)
        new_point[self.vars[0].name] = self.draw(self.classes(point), self._prior(point))
        return new_point, [{}]


class OneCoinGibbs(GivenClasses):
    """Draws every annotator's accuracy from its Beta full conditional given the true classes
    (the one-coin member of the Dawid–Skene family: ``theta_j = acc_j`` on the diagonal,
    ``(1 - acc_j) / (C - 1)`` elsewhere)::

        acc_j | z, x ~ Beta(a + gamma r_j, b + gamma w_j),

    ``r_j`` / ``w_j`` the numbers of ``j``'s labels that equal / differ from their item's
    class. Written as the logit (PyMC's log-odds value of a Beta): ``log G_1 - log G_2`` with
    ``G_1 ~ Gamma(a + gamma r_j)``, ``G_2 ~ Gamma(b + gamma w_j)``.

    Parameters as :class:`ConfusionRowsGibbs`, with ``prior = (a, b)``.
    """

    name = "one_coin_gibbs"

    def __init__(self, vars, true_class, item, annotator, label, prior, reliability=1.0,
                 model=None, rng=None, blocked=True):
        model, [value] = self._given(vars, model, true_class, item, annotator, label,
                                     reliability, rng)
        self.n_annotators = int(model.values_to_rvs[value].shape.eval()[0])
        self.prior = np.asarray(prior, dtype=float)
        self.vars = [value]

    def counts(self, classes: np.ndarray) -> np.ndarray:
        """``(annotator, 2)``: each annotator's right and wrong labels given ``classes``."""
        right = self.label == classes[self.item]
        return np.stack([np.bincount(self.annotator, weights=right, minlength=self.n_annotators),
                         np.bincount(self.annotator, weights=~right,
                                     minlength=self.n_annotators)], axis=1)

    def draw(self, classes: np.ndarray) -> np.ndarray:
        """Logit of ``acc | z``, ``(annotator,)``."""
        log_g = log_gamma_draws(self.rng, self.prior + self.reliability * self.counts(classes))
        return log_g[:, 0] - log_g[:, 1]

    def step(self, point):
        new_point = dict(point)
        new_point[self.vars[0].name] = self.draw(self.classes(point))
        return new_point, [{}]


class MaceGibbs(GivenClasses):
    """Draws MACE's competences and spamming strategies given the true classes (Hovy et al.
    2013), through the spam indicators.

    Annotator ``j`` labels truthfully with probability ``c_j`` and otherwise draws from its
    strategy ``xi_j``: ``p(x | z) = c_j [x = z] + (1 - c_j) xi_j[x]``. At a whole-number
    reliability ``gamma`` every annotation counts ``gamma`` times, each copy with its own spam
    indicator ``s ~ Bernoulli``: a label that differs from its item's class is spam in every
    copy; one that agrees is spam in ``Binomial(gamma, q)`` copies, ``q = (1 - c) xi[x] /
    (c + (1 - c) xi[x])``. Then, with ``t_j`` truthful and ``m_j[x]`` spam copies of label
    ``x``::

        c_j | s ~ Beta(a + t_j, b + sum_x m_j[x]),     xi_j | s ~ Dirichlet(delta + m_j)

    (the data-augmentation sweep of ``(s, c, xi)`` given ``z``; ``s`` is not kept). Values:
    ``c`` as its logit, ``xi`` as PyMC's simplex log-ratio.

    Parameters
    ----------
    vars : list
        ``[competence (annotator,), strategy (annotator, class)]``.
    prior : (a, b)
        Beta prior of the competences; ``strategy_concentration``: ``delta`` ``(class,)``.
    reliability : int
        ``gamma``, a whole number (repetitions).
    """

    name = "mace_gibbs"

    def __init__(self, vars, true_class, item, annotator, label, prior, strategy_concentration,
                 reliability=1, model=None, rng=None, blocked=True):
        model, (competence, strategy) = self._given(vars, model, true_class, item, annotator,
                                                    label, reliability, rng)
        self.n_annotators = int(model.values_to_rvs[competence].shape.eval()[0])
        self.prior = np.asarray(prior, dtype=float)
        self.delta = np.asarray(strategy_concentration, dtype=float)
        self.n_classes = self.delta.size
        self.repetitions = int(reliability)
        self.vars = [competence, strategy]

    def spam_counts(self, classes, competence, strategy):
        """``(truthful (annotator,), spam (annotator, class))`` copies, with the indicators
        drawn given ``classes``, ``competence (annotator,)``, ``strategy (annotator, class)``."""
        c = competence[self.annotator]
        xi = strategy[self.annotator, self.label]
        agrees = self.label == classes[self.item]
        q = np.where(agrees, (1 - c) * xi / (c + (1 - c) * xi), 1.0)
        spam = self.rng.binomial(self.repetitions, q)
        truthful = np.bincount(self.annotator, weights=self.repetitions - spam,
                               minlength=self.n_annotators)
        C = self.n_classes
        m = np.bincount(self.annotator * C + self.label, weights=spam,
                        minlength=self.n_annotators * C).reshape(self.n_annotators, C)
        return truthful, m

    def step(self, point):
        competence_name, strategy_name = (v.name for v in self.vars)
        competence = 1 / (1 + np.exp(-point[competence_name]))
        log_ratio = point[strategy_name]
        full = np.concatenate([log_ratio, -log_ratio.sum(axis=-1, keepdims=True)], axis=-1)
        strategy = np.exp(full - full.max(axis=-1, keepdims=True))
        strategy /= strategy.sum(axis=-1, keepdims=True)
        truthful, m = self.spam_counts(self.classes(point), competence, strategy)
        log_a = log_gamma_draws(self.rng, self.prior[0] + truthful)
        log_b = log_gamma_draws(self.rng, self.prior[1] + m.sum(axis=1))
        log_g = log_gamma_draws(self.rng, self.delta + m)
        new_point = dict(point)
        new_point[competence_name] = log_a - log_b
        new_point[strategy_name] = log_g[:, :-1] - log_g.mean(axis=-1, keepdims=True)
        return new_point, [{}]
