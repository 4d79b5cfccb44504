"""Exact slice scan of the annotator and item parameters of item-difficulty models given
the true classes (GLAD, Su's model; Whitehill et al. 2009; Su 2024).

Annotation ``k`` (label ``x_k`` of item ``i_k`` by annotator ``j_k``) is correct with
probability ``r_k = r(a_{j_k}, b_{i_k})`` and otherwise uniform over the ``C - 1`` wrong
classes. Given the true classes ``z`` the likelihood is
``prod_k r_k^[x_k = z_{i_k}] ((1 - r_k) / (C - 1))^[x_k != z_{i_k}]``, so with independent
priors each annotator parameter ``a_j`` depends only on annotator ``j``'s labels and the
item parameters, and each item parameter ``b_i`` only on item ``i``'s labels and the
annotator parameters. Both models write ``r_k`` through the product ``t(a_j) t(b_i)`` of a
per-coordinate factor ``t``; with the signed coefficient ``w_k = +-t(partner)`` (``+`` when
``x_k = z_{i_k}``) the full conditional of one coordinate ``x`` with factor ``t = t(x)`` is

* GLAD (``a = alpha``, ``t = alpha``; ``b = log beta``, ``t = exp(b)``; Normal priors)::

      log p(x | .) = -(x - m)^2 / (2 s^2) + sum_k log sigmoid(w_k t)     + const

  (``log sigmoid(-s) = log(1 - sigmoid(s))``; the ``- log(C - 1)`` of a wrong label is a
  constant);
* Su (``a = phi``, ``b = delta`` in ``(0, 1)``, ``t = 1 - x``, Beta priors;
  ``r = 1/C + ((C - 1)/C) t(phi) t(delta)``)::

      log p(x | .) = (a - 1) log x + (b - 1) log(1 - x)
                     + sum_{w_k > 0} log(1 + (C - 1) t w_k) + sum_{w_k < 0} log(1 + t w_k) + const.

One sweep updates every annotator coordinate, then every item coordinate, each by Neal's
univariate slice update (:mod:`plausible.inference.step_methods.univariate_slice`) on its full
conditional; the coordinates of a block are conditionally independent, so the sweep is an
exact Gibbs scan of ``p(a, b | z, x)`` (Su's parameters are sliced on ``(0, 1)`` and written
back to PyMC's log-odds value variables). The true classes are read from the point, never
written: :class:`~plausible.inference.step_methods.latent_class_gibbs.ClassGibbs` draws them.

**GLAD's scale move.** The likelihood depends on ``alpha`` and ``beta`` only through the
products ``alpha_j beta_i``, so the direction ``alpha -> c alpha``, ``beta -> beta / c`` is
identified by the priors alone and coordinate updates crawl along it (on the benchmark of
``benchmarks/bench_glad_crowdkit.py`` the mean ability had the lowest ESS of all). Each sweep
ends with a move along it: ``u`` is drawn by a slice update from ``u = 0`` on

    log q(u) = sum_j log N(e^u alpha_j; m_a, s_a) + sum_i log N(log beta_i - u; m_b, s_b) + J u

and ``alpha <- e^u alpha``, ``log beta <- log beta - u``: the generalised Gibbs move of Liu and
Sabatti (2000) for the group of scalings (``J u`` the log Jacobian of ``alpha -> e^u alpha``,
Haar measure ``du``), exact with any slice width fixed along the orbit. It needs only the
sums ``sum alpha_j``, ``sum alpha_j^2``, ``sum log beta_i``: no likelihood evaluation, and it
keeps every ability's sign.

**Layout.** The labels are grouped once by annotator and by item (CSR offsets,
:class:`LabelGroups`); a sweep is one compiled pass (numba) per block over the grouped
labels, filling a coordinate's coefficients just before its update, with no Python loop
over coordinates or sweeps. GLAD's sums of log-sigmoids are vectorised
(:mod:`plausible.maths.logspace`); its items, with ~10 labels each, too few for
one item's loop to vectorise, are updated in lockstep (:func:`glad_item_sweep`: each round
of the slice update evaluates every item still at that stage in one loop over their labels).

**Widths and stepping out.** Slice widths are per coordinate. They start at
``initial_width`` and, while PyMC tunes, are set to ``WIDTH_PER_MOVE`` times the mean
absolute move ``|x' - x|`` of the coordinate (tuning steps out without limit, so it finds
the whole slice whatever the width and the moves measure the conditional, not the width),
averaged from the start and again over the second half of tuning (burn-in moves are large).
After tuning the widths are fixed, so the recorded draws are an exact Markov chain, and
stepping out is limited to Neal's ``m`` per block (``max_steps``; by default unlimited for
the annotators and ``m = 2`` for the items, whose many short updates are most of the cost).
Tuning also serves as burn-in from :func:`plausible.sample`'s dispersed starts:
``default_tune_steps`` iterations by default.
"""

import numba
import numpy as np
from pymc.logprob.transforms import LogOddsTransform
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep
from pymc.util import get_value_vars_from_user_vars

from plausible.data.label_groups import LabelGroups
from plausible.maths.logspace import exp_nonpositive, sum_log1p_exp
from plausible.inference.step_methods.univariate_slice import slice_update

GLAD, SU = 0, 1
IDENTITY, EXPONENTIAL, COMPLEMENT = 0, 1, 2  # t(x) = x, exp(x), 1 - x
WIDTH_PER_MOVE = 3.5
LINKS = {"glad": (GLAD, IDENTITY, EXPONENTIAL), "su": (SU, COMPLEMENT, COMPLEMENT)}


@numba.njit(cache=True)
def factor(kind, x):
    """The coordinate's factor ``t(x)`` in ``r`` (see module)."""
    if kind == IDENTITY:
        return x
    if kind == EXPONENTIAL:
        return np.exp(x)
    return 1.0 - x


@numba.njit(cache=True, inline="always")
def signed_coefficient(k, partner_factor, partner, label, true_class):
    """``w_k = +-t(partner_k)``: ``+`` when label ``k`` is its item's true class ``true_class``
    (see module)."""
    w = partner_factor[partner[k]]
    return w if label[k] == true_class else -w


@numba.njit(cache=True)
def glad_log_conditional(x, kind, magnitude, start, stop, negative, positive, mean, sd, scratch,
                         gamma):
    """GLAD's log full conditional (up to a constant) of one coordinate with factor kind
    ``kind`` (``IDENTITY`` or ``EXPONENTIAL``), prior ``Normal(mean, sd)`` and reliability
    ``gamma``: ``gamma sum_k log sigmoid(w_k t)`` with
    ``sum_k log sigmoid(w_k t) = t S - sum_k log(1 + exp(-|w_k| |t|))``,
    ``magnitude[start:stop] = |w_k|`` and ``S`` the sum of the negative (``t >= 0``) or of the
    positive (``t < 0``) coefficients; ``scratch`` as long as ``magnitude``
    (:func:`~plausible.maths.logspace.sum_log1p_exp`)."""
    t = factor(kind, x)
    linear = t * (negative if t >= 0 else positive)
    z = (x - mean) / sd
    return gamma * (linear - sum_log1p_exp(magnitude, start, stop, abs(t), scratch)) - 0.5 * z * z


@numba.njit(cache=True)
def su_log_conditional(x, w, start, stop, a, b, n_classes, gamma):
    """Su's log full conditional (up to a constant) of one coordinate ``x`` in ``(0, 1)``,
    ``t = 1 - x``, signed coefficients ``w[start:stop]``, prior ``Beta(a, b)`` and the
    labels' likelihood tempered by the reliability ``gamma``."""
    t = 1.0 - x
    likelihood = 0.0
    for k in range(start, stop):
        likelihood += np.log1p((n_classes - 1) * t * w[k]) if w[k] > 0 else np.log1p(t * w[k])
    return (a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x) + gamma * likelihood


_glad_update = slice_update(glad_log_conditional)
_su_update = slice_update(su_log_conditional)


@numba.njit(cache=True)
def block_sweep(rng, x, width, kind, by_item, offsets, partner, label, partner_factor, z, prior,
                n_classes, coefficients, moves, max_steps, gamma):
    """Slice-update every coordinate of one block in place (``x``, ``(groups,)``) given the
    partners' factors ``(partners,)`` and the true classes ``z``. The labels are grouped by
    coordinate (:class:`LabelGroups` arrays ``offsets``, ``partner``, ``label``; a label's
    item is its group when ``by_item``, else its partner); ``coefficients`` is scratch
    ``(annotation,)`` for the group's ``|w_k|`` (GLAD) or ``w_k`` (Su), filled just before
    the group's update; ``gamma`` is the reliability. Adds ``|x' - x|`` to ``moves``; returns
    the number of density evaluations. GLAD's item block (``kind == EXPONENTIAL``) runs in lockstep
    (:func:`glad_item_sweep`)."""
    if kind == EXPONENTIAL:
        return glad_item_sweep(rng, x, width, offsets, partner, label, partner_factor, z, prior,
                               coefficients, moves, max_steps, gamma)
    evaluations = 0
    scratch = np.empty(coefficients.size)
    for g in range(x.size):
        start, stop = offsets[g], offsets[g + 1]
        negative = 0.0  # sums of the negative and positive signed coefficients (GLAD)
        positive = 0.0
        for k in range(start, stop):
            item = g if by_item else partner[k]
            w = signed_coefficient(k, partner_factor, partner, label, z[item])
            if kind == COMPLEMENT:
                coefficients[k] = w
            else:
                coefficients[k] = abs(w)
                negative += min(w, 0.0)
                positive += max(w, 0.0)
        old = x[g]
        if kind == COMPLEMENT:
            args = (coefficients, start, stop, prior[0], prior[1], n_classes, gamma)
            x[g], _, n = _su_update(rng, old, su_log_conditional(old, *args), 0.0, 1.0, width[g],
                                    max_steps, args)
        else:
            args = (kind, coefficients, start, stop, negative, positive, prior[0], prior[1],
                    scratch, gamma)
            x[g], _, n = _glad_update(rng, old, glad_log_conditional(old, *args), -np.inf, np.inf,
                                      width[g], max_steps, args)
        moves[g] += abs(x[g] - old)
        evaluations += n + 1
    return evaluations


@numba.njit(cache=True)
def _label_factors(scale, magnitude, out, n):
    """``out[q] = 1 + exp(-magnitude[q] scale[q])`` for ``q < n``: one long loop, vectorised."""
    for q in range(n):
        out[q] = 1.0 + exp_nonpositive(-magnitude[q] * scale[q])


@numba.njit(cache=True)
def glad_item_log_conditionals(points, active, n_active, offsets, magnitude, negative, prior,
                               log_f, scratch, gamma):
    """GLAD's item log full conditionals (:func:`glad_log_conditional`, ``t = exp(x)``) at
    ``points[i]`` for the items ``i = active[:n_active]``, written to ``log_f[i]``.

    The factors ``1 + exp(-|w_k| t_i)`` of all those items' labels are computed in one long
    vectorised loop (``scratch``: ``t`` ``(item,)`` and three float arrays ``(annotation,)``);
    per item one ``log`` of their product (each factor in ``(1, 2]``; renormalised before it
    could overflow)."""
    item_scale, scale, gathered, factors = scratch
    q = 0
    for a in range(n_active):
        i = active[a]
        t = item_scale[i] = np.exp(points[i])
        for k in range(offsets[i], offsets[i + 1]):
            scale[q] = t
            gathered[q] = magnitude[k]
            q += 1
    _label_factors(scale, gathered, factors, q)
    q = 0
    for a in range(n_active):
        i = active[a]
        total = 0.0
        product = 1.0
        for k in range(offsets[i], offsets[i + 1]):
            product *= factors[q]
            q += 1
            if product > 1e300:
                total += np.log(product)
                product = 1.0
        z = (points[i] - prior[0]) / prior[1]
        likelihood = item_scale[i] * negative[i] - (total + np.log(product))
        log_f[i] = gamma * likelihood - 0.5 * z * z


@numba.njit(cache=True)
def glad_item_sweep(rng, x, width, offsets, partner, label, ability, z, prior, magnitude, moves,
                    max_steps, gamma):
    """Neal's slice update (:mod:`plausible.inference.step_methods.univariate_slice`) of every GLAD item
    coordinate ``x_i = log beta_i`` in place, all items in lockstep.

    Given the abilities and the true classes the items are conditionally independent, so
    their updates may interleave: each round evaluates the conditionals of every item still
    at that stage (the initial point; each stepping-out end; each shrinkage proposal) in one
    call of :func:`glad_item_log_conditionals`. Item ``i`` takes the same decisions, each
    on a uniform of its own, in the same order as the one-at-a-time update (only the order
    of the draws across items differs), so each item's update is Neal's, with width
    ``width[i]`` and limit ``max_steps`` (0: none). An item has ~10 labels, too few for the
    one-item loop to vectorise; the rounds' loops run over all items' labels at once.
    ``magnitude``: scratch ``(annotation,)`` for ``|w_k|``. Adds ``|x' - x|`` to ``moves``;
    returns the number of density evaluations."""
    n = x.size
    n_labels = offsets[n]
    negative = np.zeros(n)  # sum of the negative coefficients w_k (t = exp(x) > 0)
    for i in range(n):
        for k in range(offsets[i], offsets[i + 1]):
            w = signed_coefficient(k, ability, partner, label, z[i])
            magnitude[k] = abs(w)
            negative[i] += min(w, 0.0)
    scratch = (np.empty(n), np.empty(n_labels), np.empty(n_labels), np.empty(n_labels))
    active = np.arange(n)
    log_f = np.empty(n)
    glad_item_log_conditionals(x, active, n, offsets, magnitude, negative, prior, log_f, scratch,
                               gamma)
    evaluations = n
    level, left, right = np.empty(n), np.empty(n), np.empty(n)
    steps = np.empty((2, n), dtype=np.int64)  # stepping-out steps left to the left / right
    for i in range(n):
        level[i] = log_f[i] + np.log(rng.random())
        left[i] = x[i] - width[i] * rng.random()
        right[i] = left[i] + width[i]
        if max_steps > 0:  # Neal's limit m: J = floor(m V) steps left, m - 1 - J right
            steps[0, i] = int(max_steps * rng.random())
            steps[1, i] = max_steps - 1 - steps[0, i]
        else:  # unlimited: the counters start below 0 and never reach it
            steps[0, i] = steps[1, i] = -1
    for side in range(2):
        end = left if side == 0 else right
        n_active = 0
        for i in range(n):
            if steps[side, i] != 0:
                active[n_active] = i
                n_active += 1
        while n_active > 0:
            glad_item_log_conditionals(end, active, n_active, offsets, magnitude, negative, prior,
                                       log_f, scratch, gamma)
            evaluations += n_active
            still = 0
            for a in range(n_active):
                i = active[a]
                if log_f[i] > level[i]:  # inside the slice: step out (nan: outside)
                    end[i] += width[i] if side == 1 else -width[i]
                    steps[side, i] -= 1
                    if steps[side, i] != 0:
                        active[still] = i
                        still += 1
            n_active = still
    proposal = np.empty(n)
    n_active = n
    active[:] = np.arange(n)
    while n_active > 0:  # shrinkage
        for a in range(n_active):
            i = active[a]
            proposal[i] = left[i] + (right[i] - left[i]) * rng.random()
        glad_item_log_conditionals(proposal, active, n_active, offsets, magnitude, negative, prior,
                                   log_f, scratch, gamma)
        evaluations += n_active
        still = 0
        for a in range(n_active):
            i = active[a]
            if log_f[i] > level[i]:
                moves[i] += abs(proposal[i] - x[i])
                x[i] = proposal[i]
            else:
                if proposal[i] < x[i]:
                    left[i] = proposal[i]
                else:
                    right[i] = proposal[i]
                active[still] = i
                still += 1
        n_active = still
    return evaluations


@numba.njit(cache=True)
def scale_log_density(u, sum_a, sum_a2, sum_b, n_a, n_b, mean_a, sd_a, sd_b):
    """GLAD's ``log q(u)`` (up to a constant) of the scale move ``alpha -> e^u alpha``,
    ``log beta -> log beta - u`` (see module): the Normal priors at the moved point plus the
    log Jacobian ``n_a u``, from ``sum_a = sum_j alpha_j``, ``sum_a2 = sum_j alpha_j^2`` and
    ``sum_b = sum_i (log beta_i - m_b)`` over ``n_a`` annotators and ``n_b`` items."""
    c = np.exp(u)
    annotators = c * c * sum_a2 - 2.0 * mean_a * c * sum_a
    items = n_b * u * u - 2.0 * u * sum_b
    return -0.5 * annotators / sd_a**2 - 0.5 * items / sd_b**2 + n_a * u


_scale_update = slice_update(scale_log_density)


@numba.njit(cache=True)
def scale_shift(rng, sum_a, sum_a2, sum_b, n_a, n_b, ability_prior, log_beta_prior, width,
                max_steps):
    """The shift ``u`` of GLAD's scale move, by a slice update from ``u = 0`` on ``log q(u)``
    (:func:`scale_log_density`; ``sum_b = sum_i (log beta_i - m_b)``); returns ``u`` and the
    number of density evaluations."""
    args = (sum_a, sum_a2, sum_b, n_a, n_b, ability_prior[0], ability_prior[1],
            log_beta_prior[1])
    u, _, n = _scale_update(rng, 0.0, scale_log_density(0.0, *args), -np.inf, np.inf, width,
                            max_steps, args)
    return u, n + 1


@numba.njit(cache=True)
def scale_move(rng, ability, log_beta, width, ability_prior, log_beta_prior, max_steps):
    """GLAD's scale move in place; returns ``|u|`` and the number of density evaluations."""
    u, n = scale_shift(rng, ability.sum(), (ability * ability).sum(),
                       (log_beta - log_beta_prior[0]).sum(), ability.size, log_beta.size,
                       ability_prior, log_beta_prior, width, max_steps)
    ability *= np.exp(u)
    log_beta -= u
    return abs(u), n


@numba.njit(cache=True)
def sweeps(rng, n_sweeps, annotator_x, item_x, z, widths, moves, annotator_kind, item_kind,
           a_offsets, a_partner, a_label, i_offsets, i_partner, i_label, annotator_prior,
           item_prior, n_classes, max_steps, gamma):
    """``n_sweeps`` sweeps (annotators, items, then GLAD's scale move) in place; ``widths``
    and ``moves``: ``(annotator (J,), item (I,), scale (1,))`` slice widths and accumulated
    ``|x' - x|``; ``max_steps``: the blocks' stepping-out limits (0: none); ``gamma``: the
    reliability (the power of the labels' likelihood). Returns the mean
    number of density evaluations per coordinate update."""
    coefficients = np.empty(a_partner.size)
    item_factor = np.empty(item_x.size)
    annotator_factor = np.empty(annotator_x.size)
    evaluations = 0
    for _ in range(n_sweeps):
        for i in range(item_x.size):
            item_factor[i] = factor(item_kind, item_x[i])
        evaluations += block_sweep(rng, annotator_x, widths[0], annotator_kind, False, a_offsets,
                                   a_partner, a_label, item_factor, z, annotator_prior, n_classes,
                                   coefficients, moves[0], max_steps[0], gamma)
        for j in range(annotator_x.size):
            annotator_factor[j] = factor(annotator_kind, annotator_x[j])
        evaluations += block_sweep(rng, item_x, widths[1], item_kind, True, i_offsets, i_partner,
                                   i_label, annotator_factor, z, item_prior, n_classes,
                                   coefficients, moves[1], max_steps[1], gamma)
        if annotator_kind == IDENTITY and item_kind == EXPONENTIAL:
            move, n = scale_move(rng, annotator_x, item_x, widths[2][0], annotator_prior,
                                 item_prior, max_steps[2])
            moves[2][0] += move
            evaluations += n
    return evaluations / (n_sweeps * (annotator_x.size + item_x.size))


class DifficultySlice(BlockedStep):
    """Slice scan of the annotator and item parameters of GLAD or Su's model given the true
    classes (see module).

    Parameters
    ----------
    vars : list
        ``[annotator parameter (annotator,), item parameter (item,)]``: GLAD's ``ability`` and
        ``log_inverse_difficulty`` (untransformed), or Su's ``fallibility`` and
        ``difficulty`` (on PyMC's log-odds transform).
    true_class : random variable
        The true classes ``z`` ``(item,)``, read from the point.
    item, annotator, label : int arrays ``(annotation,)``
        The long labels.
    n_classes : int
        ``C``.
    link : {"glad", "su"}
        The model.
    annotator_prior, item_prior : (float, float)
        Normal ``(mean, sd)`` (GLAD) or Beta ``(a, b)`` (Su) priors.
    sweeps : int
        Sweeps per call (each leaves the conditional invariant, so repeating is exact).
    max_steps : (int or None, int or None)
        Neal's stepping-out limit ``m`` for the annotator and the item coordinates after
        tuning (None: unlimited; tuning always steps out without limit, so that the moves it
        measures do not depend on the widths). The default caps the items, whose updates are
        most of the cost, at ``m = 2`` (one step out, on a random side).
    initial_width : float
        Slice width of every coordinate before tuning.
    reliability : float
        ``gamma > 0``, the power of the labels' likelihood given the classes (the priors are
        not tempered, so GLAD's scale move, which only the priors see, is unchanged).

    Stats: ``difficulty_slice_evaluations``, the mean number of density evaluations per
    coordinate update.
    """

    name = "difficulty_slice"
    stats_dtypes_shapes = {"difficulty_slice_evaluations": (np.float64, [])}
    default_tune_steps = 50

    def __init__(self, vars, true_class, item, annotator, label, n_classes, link,
                 annotator_prior, item_prior, sweeps=1, max_steps=(None, 2), initial_width=None,
                 reliability=1.0, model=None, rng=None, blocked=True):
        model = modelcontext(model)
        value_vars = get_value_vars_from_user_vars(vars, model)
        if len(value_vars) != 2:
            raise ValueError("DifficultySlice updates exactly [annotator parameter, item parameter]")
        if link not in LINKS:
            raise ValueError(f"link must be one of {sorted(LINKS)}, got {link!r}")
        self.family, self.annotator_kind, self.item_kind = LINKS[link]
        wanted, where = ((LogOddsTransform, "on the log-odds transform") if self.family == SU
                         else (type(None), "untransformed"))
        for value_var in value_vars:
            transform = model.rvs_to_transforms.get(model.values_to_rvs[value_var])
            if not isinstance(transform, wanted):
                raise ValueError(f"DifficultySlice({link!r}) needs {value_var.name!r} {where}")
        if int(sweeps) < 1:
            raise ValueError(f"sweeps must be >= 1, got {sweeps}")
        [z_value] = get_value_vars_from_user_vars([true_class], model)
        initial = model.initial_point()
        n_annotators, n_items = (initial[v.name].size for v in value_vars)
        item, annotator, label = (np.asarray(a, dtype=np.int64) for a in (item, annotator, label))
        self.by_annotator = LabelGroups.by(annotator, item, label, n_annotators)
        self.by_item = LabelGroups.by(item, annotator, label, n_items)
        self.n_classes = int(n_classes)
        self.priors = [np.asarray(p, dtype=float) for p in (annotator_prior, item_prior)]
        self.sweeps = int(sweeps)
        self.gamma = float(reliability)
        if len(max_steps) != 2 or any(m is not None and int(m) < 1 for m in max_steps):
            raise ValueError(f"max_steps must be two limits >= 1 (or None), got {max_steps}")
        # per block (annotators, items, GLAD's scale move); 0: no limit (univariate_slice)
        self.max_steps = np.array([0 if m is None else int(m) for m in max_steps] + [0])
        self.initial_width = (0.25 if self.family == SU else 1.0) if initial_width is None \
            else float(initial_width)
        self.shapes = [initial[v.name].shape for v in value_vars]
        self.z_name = z_value.name
        self.vars = list(value_vars)
        self.rng = np.random.default_rng(rng)
        self._reset_widths(self.default_tune_steps)

    def _reset_widths(self, tune):
        self.tune = tune > 0
        self.restart = tune // 2  # tuning iterations left before the move averages restart
        sizes = [int(np.prod(s)) for s in self.shapes] + [1]
        self.widths = tuple(np.full(size, self.initial_width) for size in sizes)
        self._restart_moves()

    def _restart_moves(self):
        self.moves = tuple(np.zeros_like(w) for w in self.widths)
        self.n_moves = 0

    def setup_chain(self, rng, tune, draws):
        """Per chain: the rng, and widths back to ``initial_width`` (tuned again)."""
        super().setup_chain(rng, tune, draws)
        self._reset_widths(tune)

    def _read(self, point, position):
        value = np.asarray(point[self.vars[position].name], dtype=float).ravel()
        return 1.0 / (1.0 + np.exp(-value)) if self.family == SU else value.copy()

    def _write(self, new_point, position, x):
        value = np.log(x) - np.log1p(-x) if self.family == SU else x
        new_point[self.vars[position].name] = value.reshape(self.shapes[position])

    def step(self, point):
        """PyMC's step method: the new point from ``point``, the annotator and item parameters
        moved by one slice scan (see the class)."""
        annotator_x, item_x = self._read(point, 0), self._read(point, 1)
        z = np.asarray(point[self.z_name], dtype=np.int64)
        moves = tuple(np.zeros_like(w) for w in self.widths)
        a, i = self.by_annotator, self.by_item
        evaluations = sweeps(
            self.rng, self.sweeps, annotator_x, item_x, z, self.widths, moves, self.annotator_kind,
            self.item_kind, a.offsets, a.partner, a.label, i.offsets, i.partner, i.label,
            *self.priors, self.n_classes, np.zeros(3, dtype=np.int64) if self.tune else self.max_steps,
            self.gamma)
        if self.tune:
            self.n_moves += self.sweeps
            for width, total, new in zip(self.widths, self.moves, moves):
                total += new
                width[:] = np.maximum(WIDTH_PER_MOVE * total / self.n_moves, 1e-8)
            self.restart -= 1
            if self.restart == 0:  # forget the burn-in: average the second half only
                self._restart_moves()
        new_point = dict(point)
        self._write(new_point, 0, annotator_x)
        self._write(new_point, 1, item_x)
        return new_point, [{"difficulty_slice_evaluations": float(evaluations)}]
