"""Bradley–Terry model of pairwise comparisons, and its noisy variant with annotators who
sometimes answer at random: a ranking of the items, and each item's posterior distribution
over the rank positions.

Comparisons come as crowd-kit's long table ``worker, left, right, label``
(:class:`~plausible.data.comparisons.Comparisons`). Bradley & Terry (1952, "Rank analysis
of incomplete block designs. I. The method of paired comparisons", Biometrika 39) give each
item ``i`` a worth ``w_i > 0``::

    w_i ~ Gamma(a, b)                          (shape a, rate b)
    P(l_k beats r_k | w) = w_l / (w_l + w_r)   comparison k of items l_k, r_k

so ``log w_l - log w_r`` is the log-odds that ``l`` is picked. The likelihood depends on the
worths' ratios only; the Gamma prior fixes their scale and is conjugate given Caron &
Doucet's augmentation (2012, "Efficient Bayesian inference for generalized Bradley–Terry
models", Journal of Computational and Graphical Statistics 21(1)), which makes exact Gibbs
sampling simple and fast (:mod:`plausible.models.bradley_terry.sampler`).

**Noisy variant** (:func:`build_noisy`): annotator ``j`` answers at random, a fair coin,
at rate ``e_j`` (a spammer has ``e_j`` near 1), and otherwise as above::

    e_j ~ Beta(spam_prior)
    P(y_k | w, e) = e_j / 2 + (1 - e_j) P_BT(y_k | w)

the probability that ``j`` answers in earnest is ``q_j = 1 - e_j``. It is the mixture of
Bugakova et al. (2019, "Aggregation of pairwise comparisons with reduction of biases",
arXiv:1906.03711), on which crowd-kit's ``NoisyBradleyTerry`` is based, made Bayesian and
without its per-annotator position bias (crowd-kit's non-earnest answer picks the left item
at the annotator's own rate; here either side alike). The rates are recorded as ``spam``,
like :mod:`plausible.models.ordered_probit`'s random answers.

**Priors and why.** ``prior = (1, 1)``: ``log w`` has sd 1.28, so two items a priori differ
by 1.8 on the log-odds scale (a typical pick probability between 0.15 and 0.85), and an item
that wins (or loses) every comparison keeps a proper posterior; the rate ``b`` sets only the
worths' unit, which the data do not inform. ``spam_prior = (1, 4)``: random answers a fifth
of the time on average, weakly (tens of comparisons per annotator outweigh it).

**Plausibility**: ``plausibility (item, class)``, per draw the one-hot of each item's rank
among the worths (class ``r`` is rank ``r``, rank 1 the largest worth), so its posterior
mean is the rank table ``P(rank_i = r | data)`` and its cumulative sum over ``r <= k`` the
probability that item ``i`` is in the top ``k``. It takes ``n^2`` values a draw; the Gibbs
sampler computes it from the stored log-worths when read where it does not fit
(``keep="summary"``; the posterior mean is still accumulated while sampling).

**Reliability** ``gamma`` multiplies the comparisons' log-likelihood: a whole number repeats
every comparison for the Gibbs sampler, any real > 0 with ``gibbs=False`` (NUTS on the
log-worths, the independent check).

**Log-likelihood for LOO**: per comparison, ``gamma log P(y_k | w, e)``, ``(chain, draw,
comparison)`` (:func:`log_likelihood`). A comparison involves two items, so it has no item to
be grouped under, and leaving one item's comparisons out would remove most of what identifies
its worth (PSIS fails); one comparison is the unit, as one rating is for
:mod:`plausible.models.ratings`.

:func:`replicate_comparisons` replicates the picks in the observed design and
:func:`predictive_check` compares two statistics with their replicates: each item's win
share (sufficient for the plain model, so it checks the sampler more than the model) and
each annotator's consistency, the share of their picks that agree with the items' observed
win shares (a spammer's is near 1/2, which the plain model cannot replicate).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy import sparse

from plausible.data.comparisons import Comparisons
from plausible.data.validation import positive, positive_integer
from plausible.data.tables import reads
from plausible.diagnostics.annotation_predictive import thinned_draws
from plausible.diagnostics.predictive_statistics import mid_p_value
from plausible.models.bradley_terry.sampler import (BradleyTerryKernel,
                                                       outcome_log_probabilities)
from plausible.inference.declarations import declare_log_likelihood
from plausible.inference.bridges.as_pymc_step import declare_kernel
from plausible.metrics.chunks import iter_sample_blocks
from plausible.models.latent_class import _read
from plausible.models.model_entry import ModelEntry, answers_at_random
from plausible.metrics.meaning import RANK_DISTRIBUTION

WHOLE_RELIABILITY = ("the Bradley-Terry Gibbs sampler repeats every comparison; pass "
                     "gibbs=False to temper with NUTS")


MAX_RANKED_ITEMS = 2000
"""The most items whose rank table is a variable of the model by default (``rank_table=None``):
it is ``n^2`` values a draw, summarised while sampling (about 10 ms a draw at 2,000 items, 400
MB of running sums over 4 chains). Beyond it the model keeps the worths alone, and the rank
summaries come from their draws (:func:`plausible.metrics.worth_ranks.rank_summary`)."""


def _comparisons(data) -> Comparisons:
    if not isinstance(data, Comparisons):
        raise TypeError(f"expected Comparisons or a DataFrame with columns worker, left, "
                        f"right, label; got {type(data).__name__}")
    return data


def coords(comparisons: Comparisons) -> dict:
    """The model's coordinates: ``item``, ``class`` (rank positions), ``annotator``,
    ``comparison``."""
    return {"item": comparisons.items, "class": comparisons.classes,
            "annotator": comparisons.annotators,
            "comparison": np.arange(comparisons.n_comparisons)}


@reads("comparisons")
def build(comparisons: Comparisons, *, reliability: float = 1, prior: tuple = (1.0, 1.0),
          noisy: bool = False, spam_prior: tuple = (1.0, 4.0), gibbs: bool = True,
          rank_table: bool | None = None) -> pm.Model:
    """PyMC model of the Bradley–Terry model (module) for ``comparisons`` (or a DataFrame
    with columns worker, left, right, label).

    Free variables ``worth (item)`` and, when ``noisy``, ``spam (annotator)`` (each
    annotator's rate of random answers); ``log_worth (item)`` and ``plausibility (item,
    class)`` (the one-hot of each item's rank, class ``r`` rank ``r``). ``reliability``: a
    whole number with ``gibbs=True`` (each comparison repeated), any real > 0 otherwise;
    ``prior``: ``(a, b)``, shape and rate of the worths' Gamma prior; ``spam_prior``: ``(a,
    b)`` of the random answers' Beta prior (noisy only); ``gibbs``: :func:`plausible.sample`
    runs the exact Gibbs sampler, False leaves the model to NUTS; ``rank_table``: whether
    ``plausibility`` is a variable (default: up to :data:`MAX_RANKED_ITEMS` items; without it
    the rank summaries come from the worths' draws).
    """
    comparisons = _comparisons(comparisons)
    gamma = (positive_integer("reliability", reliability, WHOLE_RELIABILITY) if gibbs
             else positive("reliability", reliability))
    a, b = (positive("prior", v) for v in prior)
    spam_a, spam_b = (positive("spam_prior", v) for v in spam_prior)
    c, n = comparisons, comparisons.n_items
    rank_table = n <= MAX_RANKED_ITEMS if rank_table is None else bool(rank_table)
    with pm.Model(coords=coords(c)) as model:
        pm.Data("reliability", gamma)
        worth = pm.Gamma("worth", alpha=a, beta=b, dims="item")
        log_worth = pm.Deterministic("log_worth", pt.log(worth), dims="item")
        per = log_worth[c.winner] - pt.logaddexp(log_worth[c.left], log_worth[c.right])
        if noisy:
            e = pm.Beta("spam", spam_a, spam_b, dims="annotator")[c.annotator]
            per = pt.logaddexp(pt.log(e) - np.log(2.0), pt.log1p(-e) + per)
        pm.Potential("comparisons", gamma * per.sum())
        if rank_table:
            rank = pt.argsort(pt.argsort(-log_worth))
            pm.Deterministic("plausibility",
                             pt.eq(rank[:, None], pt.arange(n)[None, :]).astype("float64"),
                             dims=("item", "class"))
    if gibbs:
        kernel = BradleyTerryKernel(c, prior=(a, b), gamma=gamma,
                                    spam_prior=(spam_a, spam_b) if noisy else None,
                                    rank_table=rank_table)
        declare_kernel(model, kernel, coords={"item": c.items, "class": c.classes,
                                              "annotator": c.annotators},
                       constant_data={"reliability": gamma})
    declare_log_likelihood(model, "comparisons", lambda trace: log_likelihood(trace, c),
                           observed=c.to_dataarray(), dim="comparison")
    return model


build_noisy = partial(build, noisy=True)
build_noisy.__doc__ = """:func:`build` with ``noisy=True``: annotators answer at random at
their own rates ``spam (annotator)`` (module)."""


def _draws(posterior, chain, draw) -> tuple[np.ndarray, np.ndarray | None]:
    """``(log_worth (sample, item), spam (sample, annotator) or None)`` at those draws."""
    log_worth = _read(posterior, "log_worth", chain, draw).astype(np.float64)
    spam = (_read(posterior, "spam", chain, draw).astype(np.float64)
            if "spam" in posterior.data_vars else None)
    return log_worth, spam


def log_likelihood(trace, comparisons: Comparisons) -> xr.DataArray:
    """Per-comparison ``gamma log P(y_k | w, e)``, ``(chain, draw, comparison)`` (module),
    ``gamma`` the trace's ``constant_data/reliability``; computed a block of draws at a time
    (:func:`~plausible.metrics.chunks.iter_sample_blocks`), so the temporaries stay small
    beside the result."""
    posterior = trace["posterior"]
    gamma = float(trace["constant_data"]["reliability"])
    shape = (posterior.sizes["chain"], posterior.sizes["draw"])
    total, m = shape[0] * shape[1], comparisons.n_comparisons
    out = np.empty((total, m))
    for block, _ in iter_sample_blocks((total,), m):
        chain, draw = np.divmod(np.arange(block.start, block.stop), shape[1])
        log_worth, spam = _draws(posterior, chain, draw)
        out[block] = outcome_log_probabilities(log_worth, comparisons, spam)
    out *= gamma
    return xr.DataArray(out.reshape(*shape, m),
                        dims=("chain", "draw", "comparison"),
                        coords={"chain": posterior["chain"].values,
                                "draw": posterior["draw"].values})


def replicate_comparisons(trace, comparisons: Comparisons, *, draws: int = 500,
                          seed: int | None = None) -> np.ndarray:
    """Replicated picks in the observed design, bool ``(sample, comparison)`` (the left item
    won): for each of ``draws`` thinned draws, each comparison a fair coin with probability
    ``e_j`` (noisy), else the left item with probability ``w_l / (w_l + w_r)``."""
    posterior = trace["posterior"]
    log_worth, spam = _draws(posterior, *thinned_draws(posterior, draws))
    rng = np.random.default_rng(seed)
    log_odds = log_worth[:, comparisons.left] - log_worth[:, comparisons.right]
    picks = rng.random(log_odds.shape) < 1.0 / (1.0 + np.exp(-log_odds))
    if spam is not None:
        random = rng.random(log_odds.shape) < spam[:, comparisons.annotator]
        picks = np.where(random, rng.random(log_odds.shape) < 0.5, picks)
    return picks


def _one_hot(index: np.ndarray, size: int) -> sparse.csr_matrix:
    return sparse.csr_matrix((np.ones(index.size), (np.arange(index.size), index)),
                             shape=(index.size, size))


def win_shares(winner_is_left: np.ndarray, comparisons: Comparisons) -> np.ndarray:
    """Each item's share of its comparisons won, ``(..., item)`` from picks ``(...,
    comparison)`` in the design of ``comparisons``."""
    picks = np.asarray(winner_is_left, dtype=np.float64)
    n = comparisons.n_items
    wins = (picks @ _one_hot(comparisons.left, n)
            + (1.0 - picks) @ _one_hot(comparisons.right, n))
    return wins / np.bincount(np.concatenate([comparisons.left, comparisons.right]),
                              minlength=n)


def annotator_consistency(winner_is_left: np.ndarray, comparisons: Comparisons) -> np.ndarray:
    """Each annotator's share of picks of the item with the larger win share (:func:`win_shares`
    of the same picks; a tie counts 1/2), ``(..., annotator)``; NaN for an annotator without
    comparisons."""
    picks = np.asarray(winner_is_left, dtype=bool)
    shares = win_shares(picks, comparisons)
    left, right = shares[..., comparisons.left], shares[..., comparisons.right]
    agree = np.where(picks, np.sign(left - right), np.sign(right - left)) * 0.5 + 0.5
    counts = np.bincount(comparisons.annotator, minlength=comparisons.n_annotators)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (agree @ _one_hot(comparisons.annotator, comparisons.n_annotators)) / counts


def predictive_check(trace, comparisons: Comparisons, *, draws: int = 500,
                     seed: int | None = None) -> pd.DataFrame:
    """Posterior predictive check of :func:`win_shares` (per item) and
    :func:`annotator_consistency` (per annotator) against :func:`replicate_comparisons`:
    one row per entry, indexed by ``(statistic, entry)`` (the entry: the item or annotator
    id), columns ``observed``, ``replicated_5%``, ``replicated_95%`` and the mid p-value
    ``p_value`` (near 0 or 1: the model does not reproduce it); the layout of
    :func:`plausible.models.multi_label.label_set_predictive_check`."""
    replicated = replicate_comparisons(trace, comparisons, draws=draws, seed=seed)
    rows = []
    for name, statistic, ids in (("win_share", win_shares, comparisons.items),
                                 ("annotator_consistency", annotator_consistency,
                                  comparisons.annotators)):
        observed = statistic(comparisons.winner_is_left, comparisons)
        rep = statistic(replicated, comparisons)
        low, high = np.quantile(rep, [0.05, 0.95], axis=0)
        rows.append(pd.DataFrame({"observed": observed, "replicated_5%": low,
                                  "replicated_95%": high, "p_value": mid_p_value(rep, observed)},
                                 index=pd.MultiIndex.from_product([[name], ids],
                                                                  names=["statistic", "entry"])))
    return pd.concat(rows)



def log_worth(posterior) -> xr.DataArray:
    """The draws of each item's log worth, ``(chain, draw, item)``."""
    return posterior["log_worth"].transpose("chain", "draw", "item")


__all__ = ["annotator_consistency", "build", "build_noisy", "coords", "log_likelihood",
           "predictive_check", "replicate_comparisons", "win_shares"]


ENTRIES = (
    ModelEntry("bradley-terry", build, "comparisons", "repetitions", False,
               "Bayesian Bradley-Terry: a Gamma worth per item, exact Gibbs with Caron & "
               "Doucet's augmentation; plausibility over rank positions",
               plausibility=RANK_DISTRIBUTION, worth_draws=log_worth,
               predictive_check=predictive_check),
    ModelEntry("noisy-bradley-terry", build_noisy, "comparisons", "repetitions",
               False, "Bradley-Terry with each annotator answering at random at their own rate "
               "(a spammer), exact Gibbs with the random answers augmented",
               plausibility=RANK_DISTRIBUTION, worth_draws=log_worth, spammer=answers_at_random,
               predictive_check=predictive_check,
               annotator_note="spam: the rate at which the annotator answers at random."),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
