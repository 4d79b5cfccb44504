"""Bayesian Plackett–Luce model for partial rankings with ties (Stutz et al. 2023).

Worths ``lambda_ik ~ Gamma(a, b)`` i.i.d. (dims ``item``, ``class``; default ``a = 1/K``,
``b = 1``), plausibilities ``lambda_i / sum_k lambda_ik``. Each reader's ranking
``b_1 > ... > b_{L-1} > (unranked)`` has the exact tied PL likelihood of
:mod:`plausible.maths.plackett_luce`; readers are independent given ``lambda``.

Reliability ``gamma`` multiplies the rankings' log-likelihood:

* ``gibbs=True`` (default): ``gamma`` must be a whole number, the number of times every reader
  counts. The model declares the exact
  :class:`~plausible.models.plackett_luce.gibbs.PlackettLuceGibbs` step (each copy with its
  own augmentation), so PyMC's loop needs no NUTS, and the compiled candidate-space sampler
  :func:`~plausible.models.plackett_luce.sampler.sample_candidates` (the same sweep plus
  independence Metropolis moves), which :func:`plausible.sample` runs unless dense storage is
  asked for: its trace holds the candidate form of :mod:`plausible.metrics.storage`.
* ``gibbs=False``: any real ``gamma > 0`` (tempered PL). There is no conjugate sampler; the
  model has no Gibbs declaration and PyMC samples ``log lambda`` with NUTS using the exact
  differentiable likelihood. With a whole ``gamma`` both builds have the same posterior (this
  is how the Gibbs step is checked against NUTS).

The likelihood enters the model as ``pm.Potential("ranking_likelihood", gamma * log p)``
(the rankings are not a PyMC distribution), so the model's ``logp`` is the exact posterior
density in both cases.

**Per-item log-likelihood.** Both builds declare :func:`log_likelihood`, ``gamma sum_r log
p(b^r | lambda_i)`` over item ``i``'s readers at every draw's worths (the Gibbs build's
``gamma`` repetitions as a factor), which :func:`plausible.sample` writes as
``log_likelihood/rankings (chain, draw, item)`` with the rankings
(``Rankings.to_dataarray``) as ``observed_data/rankings``. The likelihood sees the worths
only through ratios, and only the candidates' and the pool's total, so it is computed from
either storage of :mod:`plausible.metrics.storage` as it is (the candidate form of the
compiled sampler natively, no densifying), by the compiled
:func:`~plausible.models.plackett_luce.kernel.log_likelihood_kernel`.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from plausible.data.rankings import Rankings
from plausible.data.tables import reads
from plausible.data.validation import positive, positive_integer
from plausible.inference.declarations import declare_gibbs, declare_log_likelihood, declare_sampler
from plausible.models.plackett_luce.gibbs import PlackettLuceGibbs
from plausible.models.plackett_luce.kernel import log_likelihood_kernel
from plausible.models.plackett_luce.sampler import sample_candidates
from plausible.maths import plackett_luce as pll
from plausible.maths.plackett_luce import layout, log_likelihood_pt
from plausible.metrics.chunks import iter_sample_blocks
from plausible.metrics.storage import NAME, CandidateStorage, candidate_nbytes, storage_form
from plausible.models.model_entry import ModelEntry, most_named

WHOLE_RELIABILITY = "the Gibbs sampler repeats every reader; pass gibbs=False to temper with NUTS"


@reads("rankings")
def build(rankings, *, reliability: float = 1, gibbs: bool = True,
          shape: float | None = None, rate: float = 1.0) -> pm.Model:
    """PyMC model of PL worths for a :class:`~plausible.data.Rankings`.

    Free variable ``worth (item, class)`` (``Gamma(shape, rate)``, value ``worth_log__``);
    deterministic ``plausibility (item, class)``; potential ``ranking_likelihood``; declared
    per-item log-likelihood ``rankings`` (:func:`log_likelihood`).
    ``reliability``: a whole number of repetitions with ``gibbs=True``, any real > 0 with
    ``gibbs=False`` (see the module docstring).
    """
    n_classes = rankings.n_classes
    shape = positive("shape", 1.0 / n_classes if shape is None else shape)
    rate = positive("rate", rate)
    if gibbs:
        weight = positive_integer("reliability", reliability, WHOLE_RELIABILITY)
        gibbs_layout = layout(rankings, weight)
    else:
        weight = positive("reliability", reliability)
    coords = {"item": rankings.items, "class": rankings.classes}
    with pm.Model(coords=coords) as model:
        worth = pm.Gamma("worth", alpha=shape, beta=rate, dims=("item", "class"))
        pm.Deterministic(
            "plausibility", worth / worth.sum(axis=1, keepdims=True), dims=("item", "class")
        )
        log_lik = log_likelihood_pt(layout(rankings), pt.log(worth))
        pm.Potential("ranking_likelihood", weight * log_lik)
    if gibbs:
        declare_gibbs(model, PlackettLuceGibbs, [worth], layout=gibbs_layout, shape=shape,
                      rate=rate)
        declare_sampler(model, sample_candidates, form="candidate",
                        nbytes_per_draw=candidate_nbytes(1, rankings.n_items,
                                                         gibbs_layout.max_candidates, 4),
                        rankings=rankings, reliability=weight, shape=shape, rate=rate)
    declare_log_likelihood(model, "rankings",
                           partial(log_likelihood, rankings=rankings, reliability=weight),
                           observed=rankings.to_dataarray())
    return model


def _candidate_reader(trace, lay: pll.PLLayout):
    """``read(index) -> (cand (samples, item, C), pool (samples, item))`` float64
    plausibilities of the layout's candidates and the pool's total at ``index`` (into
    ``(chain, draw, ...)``), from either storage; and the values per sample it reads."""
    if storage_form(trace) == "dense":
        values = trace["posterior"][NAME].transpose("chain", "draw", "item", "class")

        def read(index):
            return lay.to_candidates(np.asarray(values.data[index], dtype=np.float64))

        return read, lay.n_items * lay.n_classes
    storage = CandidateStorage.from_trace(trace)
    width = lay.max_candidates
    stored = storage.candidate_class
    if stored.shape[1] < width or not np.array_equal(stored[:, :width], lay.candidate_class) \
            or (stored[:, width:] >= 0).any():
        raise ValueError("the trace's candidate classes are not the rankings' (the classes some "
                         "reader ranks, per item): a trace of other rankings?")

    def read(index):
        cand = np.asarray(storage.values.data[index], dtype=np.float64)[..., :width]
        return cand, np.asarray(storage.pooled.data[index], dtype=np.float64)

    return read, lay.n_items * (stored.shape[1] + 1)


def log_likelihood(trace, rankings: Rankings, *, reliability: float = 1) -> xr.DataArray:
    """Per-item log-likelihood ``gamma sum_r log p(b^r | lambda_i)``, ``(chain, draw, item)``:
    the exact tied PL likelihood of item ``i``'s readers (:mod:`plausible.maths.plackett_luce`)
    at every draw's plausibilities, times the reliability ``gamma`` (the factor the rankings
    contribute to the log posterior; ``gamma = 1`` for a predictive density).

    Reads dense traces (``plausibility``) and candidate-form traces (``plausibility_candidates``,
    ``pooled_mass``; the likelihood needs nothing else: the pooled classes enter only through
    their total) in blocks of draws; :func:`build` declares it, so :func:`plausible.sample`
    writes it as ``log_likelihood/rankings``.
    """
    lay = layout(rankings)
    posterior = trace["posterior"]
    read, per_sample = _candidate_reader(trace, lay)
    sample_shape = (posterior.sizes["chain"], posterior.sizes["draw"])
    starts = np.r_[lay.reader_start, lay.n_readers_total]
    out = np.empty((np.prod(sample_shape), lay.n_items))
    for samples, index in iter_sample_blocks(sample_shape, 3 * per_sample):
        cand, pool = read(index)
        with np.errstate(divide="ignore"):
            log_cand, log_pool = np.log(cand), np.log(pool)
        out[samples] = log_likelihood_kernel(starts, lay.block_offsets, lay.entry_offsets,
                                             lay.entry_candidate, lay.rank, lay.n_candidates,
                                             log_cand, log_pool)
    return xr.DataArray(reliability * out.reshape(*sample_shape, lay.n_items),
                        dims=("chain", "draw", "item"),
                        coords={"chain": posterior["chain"].values,
                                "draw": posterior["draw"].values, "item": rankings.items})


def ranking_probability(blocks, worth) -> float:
    """``p(b | lambda)`` of one reader's blocks (list of lists of class ids) for worths
    ``(K,)``; e.g. ``ranking_probability([[2], [1], [4]], [0.3, 0.15, 0.4, 0.1, 0.05])``
    is ``0.0111111``."""
    worth = np.asarray(worth, dtype=float)
    rankings = Rankings.from_selectors([[blocks]], classes=worth.size)
    return float(np.exp(pll.log_likelihood(rankings, worth[None])[0]))


ENTRIES = (
    ModelEntry("plackett-luce", build, "rankings", "repetitions", True,
               "Bayesian Plackett-Luce with ties, exact Gibbs (real reliability: gibbs=False)",
               candidate_width=most_named),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
