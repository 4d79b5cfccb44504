"""Collapsed class sweeps of the Dawid–Skene family: the annotator parameters integrated out.

With every annotator's confusion rows (or accuracy) and the class prior integrated out under
their conjugate priors, the classes alone have the posterior ``p(z | x)``, and each item's
class given all the others' is a product of Dirichlet–multinomial (Beta–binomial) predictive
terms (Griffiths & Steyvers 2004 for the collapsed scheme; Dawid & Skene 1979 and Paun et al.
2018 for the models):

    P(z_i = c | z_-i, x)  ∝  (a_c + m_c)  prod_{k in item i}  pred_k(c)

with ``m_c`` the other items of class ``c`` and, for label ``x_k`` by annotator ``j_k`` and
``gamma`` repetitions of every label (a whole number),

* full Dawid–Skene: ``pred_k(c) = prod_{r < gamma} (beta[c, x] + gamma n_j[c, x] + r) /
  (B_c + gamma N_j[c] + r)`` (``n_j[c, x]``: the other items' labels ``x`` by ``j`` on class
  ``c``, ``N_j[c] = sum_x n_j[c, x]``, ``B_c = sum_x beta[c, x]``);
* one-coin: the same with ``beta = (a, b)`` over (right, wrong): ``(a + gamma R_j + r) /
  (a + b + gamma T_j + r)`` for ``x = c`` and ``(b + gamma (T_j - R_j) + r) / (a + b + gamma
  T_j + r) / (C - 1)`` otherwise (``R_j`` right of ``T_j`` labels).

* MACE (Hovy et al. 2013): every copy of a label is truthful (it equals the class) or spam
  (drawn from the annotator's strategy); with competence ``Beta(a, b)`` and strategy
  ``Dirichlet(delta)`` integrated out, the chain is on the classes and each group's truthful
  copies ``t_g`` (a group: one annotator's labels on one item, ``n_agree`` of its ``n``
  copies agreeing with the class). Item ``i``'s class and its groups' ``t`` are drawn
  together: ``P(z_i = c | ...) ∝ (a_c + m_c) prod_g sum_t w_g(c, t)`` with ``w_g(c, t) =
  C(n_agree, t) (a + T_j)^(t) (b + S_j)^(n - t) / (a + b + T_j + S_j)^(n) · prod_x (delta_x +
  S_j[x])^(s_x) / (sum delta + S_j)^(n - t)`` (``x^(n)`` the rising factorial; ``T_j``,
  ``S_j``, ``S_j[x]`` the others' truthful, spam and spam-``x`` copies of annotator ``j``;
  ``s_x`` this group's spam copies of label ``x``), then each ``t_g ∝ w_g(z_i, t)``.

Labels of the same item are taken in their stored order, each one's copies added to the
counts before the next (so an annotator who labelled an item twice is exact too). One sweep
draws ``z_i`` for every item in turn, from the caller's uniforms by inverse CDF, with the
counts updated in place: a Markov chain on ``z`` alone, which mixes where the joint scan
(classes given parameters, parameters given classes) crawls because the two blocks are tightly
coupled (workers with few labels each). The sampler then draws the parameters given the
classes exactly (:mod:`plausible.models.dawid_skene.members`), so the trace keeps them.
"""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, inline="always")
def _log_rising(base, n):  # pragma: no cover - compiled
    """``log prod_{r < n} (base + r)`` for a whole ``n >= 0``."""
    if n == 0:
        return 0.0
    if n == 1:
        return math.log(base)
    return math.lgamma(base + n) - math.lgamma(base)


@numba.njit(cache=True, nogil=True, inline="always")
def _draw(log_q, u):  # pragma: no cover - compiled
    """The first class whose cumulative ``softmax(log_q)`` exceeds ``u``."""
    n_classes = log_q.size
    top = -np.inf
    for c in range(n_classes):
        top = max(top, log_q[c])
    total = 0.0
    for c in range(n_classes):
        log_q[c] = math.exp(log_q[c] - top)
        total += log_q[c]
    target = u * total
    cumulative = 0.0
    for c in range(n_classes - 1):
        cumulative += log_q[c]
        if target < cumulative:
            return c
    return n_classes - 1


TABLE_LIMIT = 1 << 22
"""Most entries of full Dawid–Skene's table of numerator logs (``C^2 (M + 1)`` for ``C``
classes and ``M`` labels of the busiest annotator): beyond it (hundreds of classes) the sweep
takes the logs as it goes."""


def log_tables(beta: np.ndarray, gamma: int, most: int, most_code: int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """``log_num[c, x, n] = log prod_{r < gamma} (beta[c, x] + gamma n + r)`` for ``n =
    0..most_code`` (the most labels of one code ``j C + x``, which bounds every count
    ``n_j[c, x]``; ``most`` by default) and ``log_den[c, n]`` the same of ``B_c = sum_x
    beta[c, x]`` for ``n = 0..most`` (the busiest annotator's labels, which bounds every row
    total): the predictive terms of :func:`full_sweep` for every count an annotator can reach
    (an empty ``log_num`` past :data:`TABLE_LIMIT`)."""
    most_code = most if most_code is None else most_code
    C = beta.shape[0]
    log_den = _rising_table(beta.sum(axis=1)[:, None] + gamma * np.arange(most + 1.0), gamma)
    if C * C * (most_code + 1) > TABLE_LIMIT:
        return np.empty((C, C, 0)), log_den
    return _rising_table(beta[:, :, None] + gamma * np.arange(most_code + 1.0), gamma), log_den


def _rising_table(base: np.ndarray, gamma: int) -> np.ndarray:
    if gamma == 1:
        return np.log(base)
    from scipy.special import gammaln
    return gammaln(base + gamma) - gammaln(base)


@numba.njit(cache=True, nogil=True, inline="always")
def _shift_full(code, annotator, start, stop, c, step, counts, row_totals):  # pragma: no cover
    """Labels ``start..stop`` counted ``step`` more times (+1 or -1) under class ``c``."""
    for k in range(start, stop):
        counts[code[k], c] += step
        row_totals[annotator[k], c] += step


def repeated_annotators(offsets: np.ndarray, code: np.ndarray, n_classes: int) -> np.ndarray:
    """bool ``(item,)``: whether some annotator gave the item more than one label (only then
    must a label's copies join the counts before the next label's term is read; the sweeps
    skip that bookkeeping elsewhere, reading the same terms in the same order)."""
    n_items = offsets.size - 1
    item = np.repeat(np.arange(n_items, dtype=np.int64), np.diff(offsets))
    n_annotators = int(code.max(initial=0)) // n_classes + 1
    pairs = np.sort(item * n_annotators + code // n_classes)
    out = np.zeros(n_items, dtype=np.bool_)
    out[pairs[1:][pairs[1:] == pairs[:-1]] // n_annotators] = True
    return out


@numba.njit(cache=True, nogil=True)
def full_sweep(offsets, code, annotator, label, beta, a, gamma, u, z, fixed, counts, row_totals,
               class_counts, log_num, log_den, repeats):  # pragma: no cover - compiled
    """Full Dawid–Skene's collapsed sweep (module docstring) over every item whose class is
    not known (``fixed[i] < 0``; a known item keeps ``z_i = fixed[i]``): ``code`` the labels'
    codes ``j C + x``, ``annotator`` and ``label`` their ``j`` and ``x`` (in the same order:
    no division in the sweep); ``counts (annotator * C + label, class)``, ``row_totals
    (annotator, class)`` and ``class_counts (class,)`` hold the classes ``z`` and are kept
    current; ``log_num``, ``log_den``: the predictive terms by count (:func:`log_tables`;
    ``log_num`` empty: computed here); ``repeats (item,)``: :func:`repeated_annotators`.
    Returns the number of items whose class changed."""
    n_items, n_classes = offsets.size - 1, a.size
    tabled = log_num.shape[2] > 0
    log_q = np.empty(n_classes)
    changed = 0
    for i in range(n_items):
        if fixed[i] >= 0:  # a known class: never moves, its labels stay counted under it
            continue
        start, stop, old = offsets[i], offsets[i + 1], z[i]
        class_counts[old] -= 1
        _shift_full(code, annotator, start, stop, old, -1, counts, row_totals)
        for c in range(n_classes):
            s = math.log(a[c] + class_counts[c])
            for k in range(start, stop):  # each label's copies join the counts before the next
                r, j, x = code[k], annotator[k], label[k]
                numerator = (log_num[c, x, counts[r, c]] if tabled else
                             _log_rising(beta[c, x] + gamma * counts[r, c], gamma))
                s += numerator - log_den[c, row_totals[j, c]]
                if repeats[i]:
                    counts[r, c] += 1
                    row_totals[j, c] += 1
            if repeats[i]:
                _shift_full(code, annotator, start, stop, c, -1, counts, row_totals)
            log_q[c] = s
        z[i] = _draw(log_q, u[i])
        changed += z[i] != old
        class_counts[z[i]] += 1
        _shift_full(code, annotator, start, stop, z[i], 1, counts, row_totals)
    return changed


@numba.njit(cache=True, nogil=True, inline="always")
def _shift_one_coin(code, start, stop, c, step, counts, right, total):  # pragma: no cover
    """Labels ``start..stop`` counted ``step`` more times (+1 or -1) under class ``c``."""
    n_classes = counts.shape[1]
    for k in range(start, stop):
        j = code[k] // n_classes
        if code[k] % n_classes == c:
            right[j] += step
        total[j] += step
        counts[code[k], c] += step


@numba.njit(cache=True, nogil=True)
def one_coin_sweep(offsets, code, a, u, z, fixed, counts, right, total, class_counts, log_right,
                   log_wrong, log_total, repeats):  # pragma: no cover - compiled
    """One-coin's collapsed sweep (module docstring): ``right (annotator,)`` and ``total
    (annotator,)`` count each annotator's right and all labels under the classes ``z``,
    ``counts (annotator * C + label, class)`` and ``class_counts (class,)`` as in
    :func:`full_sweep`; all kept current; ``fixed``: as in :func:`full_sweep`. ``log_right[n]``, ``log_wrong[n]``,
    ``log_total[n]``: the predictive terms by count (:func:`one_coin_tables`); ``repeats``:
    as in :func:`full_sweep`. Returns the number of items whose class changed."""
    n_items, n_classes = offsets.size - 1, a.size
    log_q = np.empty(n_classes)
    changed = 0
    for i in range(n_items):
        if fixed[i] >= 0:  # a known class: never moves, its labels stay counted under it
            continue
        start, stop, old = offsets[i], offsets[i + 1], z[i]
        class_counts[old] -= 1
        _shift_one_coin(code, start, stop, old, -1, counts, right, total)
        for c in range(n_classes):
            s = math.log(a[c] + class_counts[c])
            for k in range(start, stop):  # each label's copies join the counts before the next
                j = code[k] // n_classes
                agrees = code[k] % n_classes == c
                if agrees:
                    s += log_right[right[j]] - log_total[total[j]]
                else:
                    s += log_wrong[total[j] - right[j]] - log_total[total[j]]
                if repeats[i]:
                    right[j] += agrees
                    total[j] += 1
                    counts[code[k], c] += 1
            if repeats[i]:
                _shift_one_coin(code, start, stop, c, -1, counts, right, total)
            log_q[c] = s
        z[i] = _draw(log_q, u[i])
        changed += z[i] != old
        class_counts[z[i]] += 1
        _shift_one_coin(code, start, stop, z[i], 1, counts, right, total)
    return changed


def one_coin_tables(prior_a: float, prior_b: float, n_classes: int, gamma: int, most: int):
    """``log_right[n] = log prod_{r < gamma} (a + gamma n + r)``, ``log_wrong[n]`` the same of
    ``b`` less ``gamma log(C - 1)``, ``log_total[n]`` of ``a + b``, for ``n = 0..most``: the
    predictive terms of :func:`one_coin_sweep`."""
    n = gamma * np.arange(most + 1, dtype=np.float64)
    return (_rising_table(prior_a + n, gamma),
            _rising_table(prior_b + n, gamma) - gamma * math.log(max(n_classes - 1, 1)),
            _rising_table(prior_a + prior_b + n, gamma))


def mace_groups(offsets: np.ndarray, code: np.ndarray, n_classes: int):
    """Every item's labels grouped by annotator (MACE's collapsed sweep draws the spam copies
    of one annotator's labels on one item together): ``item_groups (item + 1,)`` the groups of
    each item, ``group_annotator (group,)``, ``group_offsets (group + 1,)`` into
    ``group_label (annotation,)`` (the labels, in group order) and ``group_code
    (annotation,)`` (their codes ``j C + x``)."""
    item = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    annotator = code // n_classes
    order = np.lexsort((annotator, item))
    key = item[order].astype(np.int64) * (annotator.max(initial=0) + 1) + annotator[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else np.empty(0, int)
    group_offsets = np.r_[starts, key.size].astype(np.int64)
    item_groups = np.searchsorted(starts, offsets[:-1]).astype(np.int64)
    item_groups = np.r_[item_groups, starts.size].astype(np.int64)
    return (item_groups, annotator[order][starts].astype(np.int64), group_offsets,
            (code[order] % n_classes).astype(np.int64), code[order].astype(np.int64))


@numba.njit(cache=True, nogil=True)
def _mace_group(g, c, repetitions, group_offsets, group_label, j, prior_a, prior_b, delta,
                delta_sum, truthful, spam, spam_label, added, log_w, log_factorial):  # pragma: no cover
    """Group ``g``'s log weights ``log_w[t]``, ``t = 0..n_agree``: its copies under class
    ``c`` with ``t`` of the ``n_agree`` copies that agree with ``c`` truthful and every other
    copy spam, given the others' ``truthful (annotator,)``, ``spam (annotator,)`` and
    ``spam_label (annotator, label)`` (annotator ``j``). Returns ``n_agree``. ``added
    (label,)``: zeros, scratch; ``log_factorial[n] = log n!``."""
    n_agree, n_total = 0, 0
    disagreeing = 0.0  # the strategy's terms of the disagreeing copies, whatever t
    for k in range(group_offsets[g], group_offsets[g + 1]):
        x = group_label[k]
        n_total += repetitions
        if x == c:
            n_agree += repetitions
        else:
            disagreeing += _log_rising(delta[x] + spam_label[j, x] + added[x], repetitions)
            added[x] += repetitions
    for k in range(group_offsets[g], group_offsets[g + 1]):
        added[group_label[k]] = 0
    head = disagreeing - _log_rising(prior_a + prior_b + truthful[j] + spam[j], n_total)
    for t in range(n_agree + 1):
        s = n_total - t
        log_w[t] = (head + log_factorial[n_agree] - log_factorial[t]
                    - log_factorial[n_agree - t]
                    + _log_rising(prior_a + truthful[j], t) + _log_rising(prior_b + spam[j], s)
                    + _log_rising(delta[c] + spam_label[j, c], n_agree - t)
                    - _log_rising(delta_sum + spam[j], s))
    return n_agree


@numba.njit(cache=True, nogil=True, inline="always")
def _log_sum(log_w, n):  # pragma: no cover - compiled
    top = -np.inf
    for t in range(n):
        top = max(top, log_w[t])
    total = 0.0
    for t in range(n):
        total += math.exp(log_w[t] - top)
    return top + math.log(total)


@numba.njit(cache=True, nogil=True, inline="always")
def _shift_mace(g, c, step, t, repetitions, group_offsets, group_label, j, truthful, spam,
                spam_label):  # pragma: no cover - compiled
    """Group ``g``'s copies under class ``c`` with ``t`` truthful counted ``step`` (+1 or -1)
    more times."""
    truthful[j] += step * t
    agreeing_spam = -t
    for k in range(group_offsets[g], group_offsets[g + 1]):
        x = group_label[k]
        spam[j] += step * repetitions
        if x == c:
            agreeing_spam += repetitions
        else:
            spam_label[j, x] += step * repetitions
    spam[j] -= step * t
    spam_label[j, c] += step * agreeing_spam


@numba.njit(cache=True, nogil=True, inline="always")
def _single(j, x, prior_a, prior_b, delta, delta_sum, truthful, spam, spam_label):  # pragma: no cover
    """A group of one copy of label ``x`` by annotator ``j``: the log weights of its being
    spam and (under class ``x`` only) truthful, as :func:`_mace_group`'s."""
    log_n = math.log(prior_a + prior_b + truthful[j] + spam[j])
    spam_x = (math.log(prior_b + spam[j]) - log_n - math.log(delta_sum + spam[j])
              + math.log(delta[x] + spam_label[j, x]))
    return spam_x, math.log(prior_a + truthful[j]) - log_n


@numba.njit(cache=True, nogil=True)
def mace_sweep(item_groups, group_annotator, group_offsets, group_label, group_code, a,
               repetitions, prior_a, prior_b, delta, u, z, fixed, group_truthful, truthful, spam,
               spam_label, counts, class_counts):  # pragma: no cover - compiled
    """MACE's collapsed sweep (module docstring) over every item: ``(z_i, t_i) | z_-i, t_-i,
    x`` with every competence and strategy integrated out, ``t_g`` the truthful copies of
    group ``g`` (one annotator's labels on one item, :func:`mace_groups`), drawn from the
    caller's uniforms ``u (item + group,)`` (the items' first). ``truthful``, ``spam``
    ``(annotator,)``, ``spam_label (annotator, label)``, ``counts (code, class)`` and
    ``class_counts`` are kept current. An item of known class (``fixed[i] >= 0``) keeps it;
    its groups' ``t`` are drawn given it. Returns the number of items whose class changed."""
    n_items, n_classes = item_groups.size - 1, a.size
    most = 1
    for g in range(group_annotator.size):
        most = max(most, repetitions * (group_offsets[g + 1] - group_offsets[g]) + 1)
    log_w = np.empty(most)
    log_factorial = np.zeros(most)
    for n in range(2, most):
        log_factorial[n] = log_factorial[n - 1] + math.log(n)
    added = np.zeros(n_classes, dtype=np.int64)
    log_q = np.empty(n_classes)
    delta_sum = 0.0
    for x in range(n_classes):
        delta_sum += delta[x]
    changed = 0
    for i in range(n_items):
        old = z[i]
        class_counts[old] -= 1
        for g in range(item_groups[i], item_groups[i + 1]):
            _shift_mace(g, old, -1, group_truthful[g], repetitions, group_offsets, group_label,
                        group_annotator[g], truthful, spam, spam_label)
            for k in range(group_offsets[g], group_offsets[g + 1]):
                counts[group_code[k], old] -= 1
        for c in range(n_classes):
            log_q[c] = math.log(a[c] + class_counts[c])
        for g in range(item_groups[i], item_groups[i + 1]):
            j = group_annotator[g]
            if repetitions == 1 and group_offsets[g + 1] - group_offsets[g] == 1:
                # one copy: spam (any class) or truthful (its own label's class only)
                x = group_label[group_offsets[g]]
                spam_x, true_x = _single(j, x, prior_a, prior_b, delta, delta_sum, truthful,
                                         spam, spam_label)
                for c in range(n_classes):
                    log_q[c] += spam_x
                top = max(spam_x, true_x)
                log_q[x] += top + math.log(math.exp(spam_x - top) + math.exp(true_x - top)) - spam_x
                continue
            for c in range(n_classes):
                n_agree = _mace_group(g, c, repetitions, group_offsets, group_label, j, prior_a,
                                      prior_b, delta, delta_sum, truthful, spam, spam_label,
                                      added, log_w, log_factorial)
                log_q[c] += _log_sum(log_w, n_agree + 1)
        new = _draw(log_q, u[i]) if fixed[i] < 0 else fixed[i]
        z[i] = new
        changed += new != old
        class_counts[new] += 1
        for g in range(item_groups[i], item_groups[i + 1]):
            j = group_annotator[g]
            if repetitions == 1 and group_offsets[g + 1] - group_offsets[g] == 1:
                x = group_label[group_offsets[g]]
                t = 0
                if x == new:
                    spam_x, true_x = _single(j, x, prior_a, prior_b, delta, delta_sum, truthful,
                                             spam, spam_label)
                    t = int(u[n_items + g] * (1.0 + math.exp(spam_x - true_x)) < 1.0)
            else:
                n_agree = _mace_group(g, new, repetitions, group_offsets, group_label, j,
                                      prior_a, prior_b, delta, delta_sum, truthful, spam,
                                      spam_label, added, log_w, log_factorial)
                t = _draw(log_w[:n_agree + 1], u[n_items + g])
            group_truthful[g] = t
            _shift_mace(g, new, 1, t, repetitions, group_offsets, group_label, j, truthful,
                        spam, spam_label)
            for k in range(group_offsets[g], group_offsets[g + 1]):
                counts[group_code[k], new] += 1
    return changed
