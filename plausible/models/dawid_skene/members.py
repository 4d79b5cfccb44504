"""The annotator half of the compiled Dawid–Skene sweep, for every member of the family.

Given the true classes ``z``, every member's annotator parameters depend on the labels only
through the counts ``n_j[c, x]`` (annotator ``j``'s labels ``x`` on items of class ``c``),
which the class sweep keeps current (:mod:`plausible.models.dawid_skene.sampler`). Each
member draws its parameters from their exact conditional given ``n`` (at reliability
``gamma``) and writes the confusion matrices into the sweep's table ``T[j C + x, c] = log
theta_j[c, x]``:

* :class:`FullConfusion` — ``theta_j[c] ~ Dirichlet(beta_c + gamma n_j[c])`` (compiled,
  :func:`~plausible.models.dawid_skene.kernel.draw_rows`);
* :class:`LearnedPrior` — full Dawid–Skene's rows under one symmetric prior (``d`` on the
  diagonal, ``o`` off it) learned from the crowd: first ``(d, o) | z`` with every row
  integrated out (:mod:`plausible.inference.step_methods.symmetric_prior`), then the rows exactly;
* :class:`OneCoin` — ``acc_j ~ Beta(a + gamma r_j, b + gamma w_j)`` with ``r_j = sum_c
  n_j[c, c]`` right and ``w_j`` wrong labels; ``theta_j = acc_j`` on the diagonal and
  ``(1 - acc_j) / (C - 1)`` elsewhere;
* :class:`Mace` — the spam indicators given the current competence ``c_j`` and strategy
  ``xi_j``: of the ``gamma n_j[x, x]`` copies of labels that agree with their class,
  ``Binomial(gamma n_j[x, x], q_jx)`` are spam, ``q_jx = (1 - c_j) xi_j[x] / (c_j + (1 -
  c_j) xi_j[x])`` (a sum of the per-label Bernoulli indicators, which share ``q_jx``), every
  copy of a disagreeing label is; then ``c_j ~ Beta(a + truthful_j, b + spam_j)`` and ``xi_j
  ~ Dirichlet(delta + spam_j[.])`` (``gamma`` a whole number of repetitions);
* :class:`Hierarchical` — ``theta_j[c] ~ Dirichlet(kappa_c mu_c)`` below a population
  ``mu_c ~ Dirichlet(beta_c)``, ``kappa_c ~ Gamma(s, r)``: first ``(kappa_c, mu_c) | z`` with
  every annotator's row integrated out (below), then the rows exactly, ``theta_j[c] | kappa,
  mu, z ~ Dirichlet(kappa_c mu_c + gamma n_j[c])``. Together a joint draw of ``(kappa, mu,
  theta) | z``, with no funnel between the concentration and the rows.

**Hierarchical population, rows integrated out**: class ``c``'s rows ``gamma n_j[c, :]`` of
every annotator are the count rows of a Dirichlet-multinomial population ``alpha_c = kappa_c
mu_c`` (:mod:`plausible.inference.step_methods.dirichlet_multinomial_population`), whose slice scan over
``(log kappa_c, log g_c)`` and fresh scale of ``g_c`` leave ``p(kappa_c, mu_c | z)`` invariant,
independently for every class. The ``g_c`` are kept between sweeps (an augmentation),
``mu_c`` is stored.

Full Dawid–Skene, one-coin, MACE and the hierarchical model also sweep the classes with
their rows (accuracies; MACE's competences and strategies, keeping each label group's
truthful copies as state and drawing ``(c, xi)`` from them by ``collapsed_draw``) integrated
out (:mod:`plausible.models.dawid_skene.collapsed`; the
hierarchical model's given its current population ``alpha_c = kappa_c mu_c``, then ``(kappa,
mu, theta) | z`` as above: a partially collapsed Gibbs scan, valid because the rows are drawn
afresh before anything conditions on them): ``collapsed_statistics(design, z, counts, gamma)``
gives the sufficient statistics that sweep keeps beside the counts and its tables of
predictive logs, ``collapsed_sweep(rng, design, a, gamma, z, counts, class_counts,
statistics, state)`` runs it (``state``: the member's).

Every member: ``start(n_annotators, n_classes)`` gives a chain's first state (or None),
``load(values, n_annotators, n_classes, rng)`` the state from a PyMC point's values,
``draw(rng, counts, gamma, table, state, rows=True)`` the next state with ``table`` filled
(``rows=False``: the caller reads no row of this draw, which a member may then leave
undrawn), ``values(table, state)`` the stored variables of a kept draw and
``confusion(values, n_classes)`` the confusion matrices ``(..., annotator,
class, label_class)`` of stored values (the plausibilities computed when read). Full
Dawid–Skene (its prior fixed or learned), one-coin and the
hierarchical model also give ``swap_log_ratio(counts, a, b, gamma, state)``, their term of the
class-swap move's acceptance ratio (:mod:`plausible.inference.step_methods.class_swap`).
"""

from __future__ import annotations

import math

import numpy as np

from plausible.inference.step_methods import class_swap
from plausible.models.dawid_skene import collapsed
from plausible.models.dawid_skene import kernel
from plausible.inference.step_methods.dirichlet_multinomial_population import count_summary, draw_population
from plausible.inference.step_methods.symmetric_prior import (symmetric_concentration, symmetric_scan,
                                                 symmetric_summary)
from plausible.maths.logspace import log_dirichlet_draws, log_gamma_draws


def summed_counts(counts: np.ndarray) -> np.ndarray:
    """``n (annotator, class, label_class)`` from the sweep's ``counts (part, code, class)``,
    ``code = j C + x``."""
    n_classes = counts.shape[2]
    n = counts.sum(axis=0)
    return n.reshape(-1, n_classes, n_classes).swapaxes(1, 2)


def _row_totals(counts: np.ndarray) -> np.ndarray:
    """``N_j[c]`` ``(annotator, class)``: the row totals of one part's ``counts (code,
    class)``."""
    n_codes, n_classes = counts.shape
    return counts.reshape(n_codes // n_classes, n_classes, n_classes).sum(axis=1)


def write_table(log_theta: np.ndarray, table: np.ndarray) -> None:
    """``table[j C + x, c] = log_theta[j, c, x]``."""
    table[:] = np.swapaxes(log_theta, 1, 2).reshape(table.shape)


def confusion_from_table(table: np.ndarray) -> np.ndarray:
    """``theta (annotator, class, label_class)`` from a table."""
    n_classes = table.shape[1]
    return np.exp(table.reshape(-1, n_classes, n_classes).swapaxes(1, 2))


def _full_sweep(rng, design, beta, a, gamma: int, z, counts, totals, class_counts,
                tables=None):
    """Full Dawid–Skene's collapsed sweep of the classes with every row's prior ``beta
    (class, class)`` (:func:`~plausible.models.dawid_skene.collapsed.full_sweep`);
    ``tables``: its predictive log tables, built from ``beta`` when None."""
    uniforms = rng.random(design.n_items)
    if tables is None:
        tables = collapsed.log_tables(beta, gamma, design.most_labels, design.most_code)
    return collapsed.full_sweep(design.offsets, design.code, design.annotator, design.label,
                                beta, a, gamma, uniforms, z, design.fixed, counts, totals,
                                class_counts, *tables, design.repeats)


class FullConfusion:
    """Bayesian Dawid–Skene's rows (module). ``beta (class, label_class)``."""

    def __init__(self, beta: np.ndarray):
        self.beta = np.asarray(beta, dtype=np.float64)

    def stored(self, n_annotators: int, n_classes: int) -> dict:
        return {"confusion": (("annotator", "class", "label_class"),
                              (n_annotators, n_classes, n_classes))}

    def start(self, n_annotators: int, n_classes: int):
        return None

    def load(self, values: dict, n_annotators: int, n_classes: int, rng):
        return None

    def draw(self, rng, counts, gamma, table, state, rows: bool = True):
        kernel.draw_rows(rng, counts, self.beta, gamma, table)
        return state

    def values(self, table, state) -> dict:
        return {"confusion": confusion_from_table(table)}

    @staticmethod
    def confusion(values: dict, n_classes: int) -> np.ndarray:
        return values["confusion"]

    def swap_log_ratio(self, counts, a: int, b: int, gamma: float, state) -> float:
        """The rows' term of exchanging classes ``a`` and ``b`` in every item
        (:func:`~plausible.inference.step_methods.class_swap.rows_log_ratio`)."""
        return class_swap.rows_log_ratio(self.beta, counts, a, b, gamma)

    def collapsed_statistics(self, design, z, counts: np.ndarray, gamma: int) -> tuple:
        """``N_j[c]`` ``(annotator, class)`` (the row totals of one part's ``counts``) and the
        predictive log tables up to the busiest annotator's labels
        (:func:`~plausible.models.dawid_skene.collapsed.log_tables`)."""
        return (_row_totals(counts), *collapsed.log_tables(self.beta, gamma, design.most_labels,
                                                                design.most_code))

    def collapsed_sweep(self, rng, design, a, gamma: int, z, counts, class_counts, statistics,
                        state):
        totals, *tables = statistics
        return _full_sweep(rng, design, self.beta, a, gamma, z, counts, totals, class_counts,
                           tables)


class LearnedPrior:
    """Full Dawid–Skene's rows under one symmetric prior learned from the crowd (module):
    ``d`` on the diagonal, ``o`` elsewhere, with normal priors ``(mean, sd)`` on ``(log d,
    log o)`` truncated to ``o < d``. The state is ``v = (log d, log o)``."""

    WIDTH = 1.0

    def __init__(self, mean, sd):
        self.mean = np.asarray(mean, dtype=np.float64)
        self.sd = np.asarray(sd, dtype=np.float64)

    def stored(self, n_annotators: int, n_classes: int) -> dict:
        return {"prior_diagonal": ((), ()), "prior_off_diagonal": ((), ()),
                "confusion": (("annotator", "class", "label_class"),
                              (n_annotators, n_classes, n_classes))}

    def start(self, n_annotators: int, n_classes: int):
        """The prior's centre (its means satisfy ``o < d``)."""
        return self.mean.copy()

    def load(self, values: dict, n_annotators: int, n_classes: int, rng):
        return np.log([float(values["prior_diagonal"]), float(values["prior_off_diagonal"])])

    def draw(self, rng, counts, gamma, table, state, rows: bool = True):
        """``(log d, log o) | z`` with every row integrated out, then the rows exactly (left
        out with ``rows=False``: a collapsed sweep that records nothing reads no row)."""
        v = state.copy()
        n_classes = counts.shape[2]
        symmetric_scan(rng, v, *symmetric_summary(summed_counts(counts), gamma), n_classes,
                       self.mean, self.sd, self.WIDTH)
        if rows:
            kernel.draw_rows(rng, counts, symmetric_concentration(n_classes, v), gamma, table)
        return v

    def values(self, table, state) -> dict:
        return {"prior_diagonal": math.exp(state[0]), "prior_off_diagonal": math.exp(state[1]),
                "confusion": confusion_from_table(table)}

    @staticmethod
    def confusion(values: dict, n_classes: int) -> np.ndarray:
        return values["confusion"]

    def swap_log_ratio(self, counts, a: int, b: int, gamma: float, state) -> float:
        """The rows' term of exchanging classes ``a`` and ``b`` in every item under the
        current prior (full Dawid–Skene's with ``beta`` the learned one)."""
        return class_swap.rows_log_ratio(symmetric_concentration(counts.shape[2], state),
                                         counts, a, b, gamma)

    def collapsed_statistics(self, design, z, counts: np.ndarray, gamma: int) -> tuple:
        """``N_j[c]`` ``(annotator, class)``: the log tables depend on the learned prior, so
        :meth:`collapsed_sweep` builds them each sweep."""
        return (_row_totals(counts),)

    def collapsed_sweep(self, rng, design, a, gamma: int, z, counts, class_counts, statistics,
                        state):
        """Full Dawid–Skene's collapsed sweep at the current prior ``beta(d, o)`` (the classes
        given the prior, the rows integrated out); :meth:`draw` then gives ``(d, o, theta) |
        z``."""
        return _full_sweep(rng, design, symmetric_concentration(design.n_classes, state), a,
                           gamma, z, counts, statistics[0], class_counts)


class OneCoin:
    """One accuracy per annotator (module). ``prior = (a, b)`` of the Beta prior."""

    def __init__(self, prior):
        self.a, self.b = (float(v) for v in prior)

    def stored(self, n_annotators: int, n_classes: int) -> dict:
        return {"accuracy": (("annotator",), (n_annotators,))}

    def start(self, n_annotators: int, n_classes: int):
        return None

    def load(self, values: dict, n_annotators: int, n_classes: int, rng):
        return None

    def draw(self, rng, counts, gamma, table, state, rows: bool = True):
        n = summed_counts(counts)
        right = np.trace(n, axis1=1, axis2=2)
        log_g = log_gamma_draws(rng, np.stack([self.a + gamma * right,
                                               self.b + gamma * (n.sum(axis=(1, 2)) - right)], 1))
        log_acc, log_wrong = (log_g - np.logaddexp(log_g[:, :1], log_g[:, 1:])).T
        write_table(self._log_confusion(log_acc, log_wrong, n.shape[1]), table)
        return np.exp(log_acc)

    @staticmethod
    def _log_confusion(log_acc, log_wrong, n_classes):
        eye = np.eye(n_classes, dtype=bool)
        return np.where(eye, log_acc[:, None, None],
                        (log_wrong - math.log(n_classes - 1))[:, None, None])

    def values(self, table, state) -> dict:
        return {"accuracy": state}

    def swap_log_ratio(self, counts, a: int, b: int, gamma: float, state) -> float:
        """The accuracies' term of exchanging classes ``a`` and ``b`` in every item
        (:func:`~plausible.inference.step_methods.class_swap.accuracy_log_ratio`)."""
        return class_swap.accuracy_log_ratio(self.a, self.b, counts, a, b, gamma)

    def collapsed_statistics(self, design, z, counts: np.ndarray, gamma: int) -> tuple:
        """``(R_j, T_j)`` (each annotator's right and all labels in one part's ``counts``) and
        the predictive log tables up to the busiest annotator's labels
        (:func:`~plausible.models.dawid_skene.collapsed.one_coin_tables`)."""
        n_codes, n_classes = counts.shape
        n = counts.reshape(n_codes // n_classes, n_classes, n_classes)  # (annotator, x, c)
        return (np.trace(n, axis1=1, axis2=2).copy(), n.sum(axis=(1, 2)),
                *collapsed.one_coin_tables(self.a, self.b, n_classes, gamma, design.most_labels))

    def collapsed_sweep(self, rng, design, a, gamma: int, z, counts, class_counts, statistics,
                        state):
        return collapsed.one_coin_sweep(design.offsets, design.code, a,
                                        rng.random(design.n_items), z, design.fixed, counts, *statistics[:2],
                                        class_counts, *statistics[2:], design.repeats)

    @staticmethod
    def confusion(values: dict, n_classes: int) -> np.ndarray:
        accuracy = values["accuracy"][..., None, None]
        eye = np.eye(n_classes)
        return accuracy * eye + (1 - accuracy) / (n_classes - 1) * (1 - eye)


class Mace:
    """MACE's competences and strategies through the spam indicators (module).
    ``prior = (a, b)`` of the competences' Beta, ``delta (class,)`` the strategies'
    Dirichlet, ``repetitions`` the whole-number reliability."""

    def __init__(self, prior, delta, repetitions: int):
        self.a, self.b = (float(v) for v in prior)
        self.delta = np.asarray(delta, dtype=np.float64)
        self.repetitions = int(repetitions)

    def stored(self, n_annotators: int, n_classes: int) -> dict:
        return {"competence": (("annotator",), (n_annotators,)),
                "strategy": (("annotator", "label_class"), (n_annotators, n_classes))}

    def start(self, n_annotators: int, n_classes: int):
        """The prior's means, as the PyMC build starts: ``c = a / (a + b)``, ``xi`` uniform."""
        return (np.full(n_annotators, self.a / (self.a + self.b)),
                np.full((n_annotators, n_classes), 1 / n_classes))

    def load(self, values: dict, n_annotators: int, n_classes: int, rng):
        """The spam indicators are drawn given the current ``(c, xi)``: they are the state."""
        return (np.asarray(values["competence"], dtype=np.float64),
                np.asarray(values["strategy"], dtype=np.float64))

    def draw(self, rng, counts, gamma, table, state, rows: bool = True):
        n = summed_counts(counts)
        competence, strategy = state
        agree = np.diagonal(n, axis1=1, axis2=2)  # (annotator, label): labels equal to the class
        spam_share = (1 - competence[:, None]) * strategy
        q = spam_share / (competence[:, None] + spam_share)
        R = self.repetitions
        spam_agreeing = rng.binomial(R * agree, q)
        spam = R * (n.sum(axis=1) - agree) + spam_agreeing  # (annotator, label)
        truthful = R * agree.sum(axis=1) - spam_agreeing.sum(axis=1)
        log_g = log_gamma_draws(rng, np.stack([self.a + truthful, self.b + spam.sum(axis=1)], 1))
        competence = np.exp(log_g[:, 0] - np.logaddexp(log_g[:, 0], log_g[:, 1]))
        strategy = np.exp(log_dirichlet_draws(rng, self.delta + spam))
        write_table(np.log(self.confusion({"competence": competence, "strategy": strategy},
                                          strategy.shape[1])), table)
        return competence, strategy

    def values(self, table, state) -> dict:
        return {"competence": state[0], "strategy": state[1]}

    def collapsed_statistics(self, design, z, counts: np.ndarray, gamma: int) -> tuple:
        """The label groups (:func:`~plausible.models.dawid_skene.collapsed.mace_groups`),
        each group's truthful copies (at the start, every copy that agrees with its item's
        class ``z``) and the annotators' ``truthful (annotator,)``, ``spam (annotator,)`` and
        ``spam_label (annotator, label)`` copies they add up to."""
        C, R = design.n_classes, self.repetitions
        groups = collapsed.mace_groups(design.offsets, design.code, C)
        item_groups, group_annotator, group_offsets, group_label, _ = groups
        group_item = np.repeat(np.arange(design.n_items), np.diff(item_groups))
        label_group = np.repeat(np.arange(group_annotator.size), np.diff(group_offsets))
        agree = group_label == z[group_item[label_group]]
        group_truthful = R * np.bincount(label_group, agree, minlength=group_annotator.size)
        group_truthful = group_truthful.astype(np.int64)
        J = design.n_annotators
        annotator = group_annotator[label_group]
        truthful = np.bincount(annotator, R * agree, minlength=J).astype(np.int64)
        spam = np.bincount(annotator, minlength=J).astype(np.int64) * R - truthful
        spam_label = np.bincount(annotator[~agree] * C + group_label[~agree],
                                 minlength=J * C).reshape(J, C).astype(np.int64) * R
        return (*groups, group_truthful, truthful, spam, spam_label)

    def collapsed_sweep(self, rng, design, a, gamma: int, z, counts, class_counts, statistics,
                        state):
        """Every item's class and its labels' truthful copies given the others', with every
        competence and strategy integrated out
        (:func:`~plausible.models.dawid_skene.collapsed.mace_sweep`)."""
        n_groups = statistics[1].size
        return collapsed.mace_sweep(*statistics[:5], a, self.repetitions, self.a, self.b,
                                    self.delta, rng.random(design.n_items + n_groups), z, design.fixed,
                                    *statistics[5:], counts, class_counts)

    def collapsed_draw(self, rng, statistics, table):
        """``c_j ~ Beta(a + truthful_j, b + spam_j)``, ``xi_j ~ Dirichlet(delta +
        spam_label_j)``: the parameters given the classes and the truthful copies of the
        collapsed sweep, written into ``table``; returns the member's state."""
        truthful, spam, spam_label = statistics[6:]
        log_g = log_gamma_draws(rng, np.stack([self.a + truthful, self.b + spam], 1))
        competence = np.exp(log_g[:, 0] - np.logaddexp(log_g[:, 0], log_g[:, 1]))
        strategy = np.exp(log_dirichlet_draws(rng, self.delta + spam_label))
        write_table(np.log(self.confusion({"competence": competence, "strategy": strategy},
                                          strategy.shape[1])), table)
        return competence, strategy

    @staticmethod
    def confusion(values: dict, n_classes: int) -> np.ndarray:
        c = values["competence"][..., None, None]
        xi = values["strategy"][..., None, :]
        return c * np.eye(xi.shape[-1]) + (1 - c) * xi


class Hierarchical:
    """Hierarchical Dawid–Skene (module): ``beta (class, label_class)`` the population's
    Dirichlet prior, ``concentration_prior = (shape, rate)`` of ``kappa_c``; ``start_confusion
    (class, label_class)`` the population's start (the majority's pooled confusion)."""

    WIDTH = 1.0

    def __init__(self, beta, concentration_prior, start_confusion):
        self.beta = np.asarray(beta, dtype=np.float64)
        self.shape, self.rate = (float(v) for v in concentration_prior)
        self.start_confusion = np.asarray(start_confusion, dtype=np.float64)

    def stored(self, n_annotators: int, n_classes: int) -> dict:
        return {"population_confusion": (("class", "label_class"), (n_classes, n_classes)),
                "concentration": (("class",), (n_classes,)),
                "confusion": (("annotator", "class", "label_class"),
                              (n_annotators, n_classes, n_classes))}

    def start(self, n_annotators: int, n_classes: int):
        """``(class, 1 + label_class)``: ``log kappa = 0`` and ``log g = log mu_start``."""
        return np.concatenate([np.zeros((len(self.beta), 1)), np.log(self.start_confusion)], 1)

    def load(self, values: dict, n_annotators: int, n_classes: int, rng):
        """``(log kappa_c, log g_c)``: ``g_c = S_c mu_c`` with the scale ``S_c ~ Gamma(sum
        beta_c, 1)`` drawn from its conditional given ``mu_c`` (its prior; module)."""
        log_scale = log_gamma_draws(rng, self.beta.sum(axis=1))
        log_mu = np.log(np.asarray(values["population_confusion"], dtype=np.float64))
        return np.concatenate([np.log(np.asarray(values["concentration"], dtype=np.float64))[:, None],
                               log_mu + log_scale[:, None]], 1)

    def draw(self, rng, counts, gamma, table, state, rows: bool = True):
        n = summed_counts(counts)
        v = state.copy()
        log_theta = np.empty(n.shape)
        for c in range(n.shape[1]):
            rows = np.ascontiguousarray(gamma * n[:, c, :], dtype=np.float64)
            log_alpha = draw_population(rng, v[c], count_summary(rows), True, self.beta[c],
                                        self.shape, self.rate, self.WIDTH)
            log_theta[:, c, :] = log_dirichlet_draws(rng, np.exp(log_alpha) + rows)
        write_table(log_theta, table)
        return v

    def values(self, table, state) -> dict:
        log_mu = state[:, 1:] - np.logaddexp.reduce(state[:, 1:], axis=1, keepdims=True)
        return {"population_confusion": np.exp(log_mu), "concentration": np.exp(state[:, 0]),
                "confusion": confusion_from_table(table)}

    @staticmethod
    def confusion(values: dict, n_classes: int) -> np.ndarray:
        return values["confusion"]

    @staticmethod
    def _population(state) -> np.ndarray:
        """``alpha (class, label_class) = kappa_c mu_c`` of the member's state."""
        log_mu = state[:, 1:] - np.logaddexp.reduce(state[:, 1:], axis=1, keepdims=True)
        return np.exp(state[:, :1] + log_mu)

    def swap_log_ratio(self, counts, a: int, b: int, gamma: float, state) -> float:
        """The rows' term of exchanging classes ``a`` and ``b`` in every item, each row
        under the current population ``alpha_c`` (full Dawid–Skene's with ``beta = alpha``)."""
        return class_swap.rows_log_ratio(self._population(state), counts, a, b, gamma)

    def collapsed_statistics(self, design, z, counts: np.ndarray, gamma: int) -> tuple:
        """``N_j[c]`` ``(annotator, class)`` (the row totals of one part's ``counts``): the
        log tables depend on the population, so :meth:`collapsed_sweep` builds them each
        sweep."""
        return (_row_totals(counts),)

    def collapsed_sweep(self, rng, design, a, gamma: int, z, counts, class_counts, statistics,
                        state):
        """Full Dawid–Skene's collapsed sweep with every row's prior the current population
        ``alpha_c = kappa_c mu_c`` (from ``state``): the classes given the population with the
        rows integrated out; :meth:`draw` then gives ``(kappa, mu, theta) | z``."""
        return _full_sweep(rng, design, self._population(state), a, gamma, z, counts,
                           statistics[0], class_counts)


__all__ = ["FullConfusion", "Hierarchical", "LearnedPrior", "Mace", "OneCoin",
           "confusion_from_table", "summed_counts", "write_table"]
