"""Multi-label latent-class model: annotators tag items with any subset of ``K`` labels; the
labels co-occur in patterns that a Bernoulli mixture over the items' true label sets learns.

Per-label aggregation (crowd-kit's ``BinaryRelevance``: one binary Dawid & Skene 1979 model
per label) treats the labels as independent, so a tag that one annotator carries and two
skip is judged without the item's other labels. Duan, Oyama, Sato & Kurihara (2014,
"Separate or joint? Estimation of multiple labels from crowdsourced annotations", *Expert
Systems with Applications*) showed that modelling the dependence among the true labels helps
in the Dawid–Skene setting; the mixture of independent multinoullis of MCMLD ("Multi-label
truth inference for crowdsourcing using mixture models", fitted there by EM) is the form
used here, in its binary (present/absent) case, with a per-annotator, per-label sensitivity
and specificity (Carpenter 2008's binary annotator model, per label) and full Bayesian
inference. Response ``r`` is annotator ``j_r``'s 0/1 vector ``x_r`` for item ``i_r``::

    pi      ~ Dirichlet(alpha, ..., alpha)      component weights, (component,)
    phi_mk  ~ Beta(rate_prior)                  P(label k | component m), (component, class)
    se_jk   ~ Beta(sensitivity_prior)           P(x_k = 1 | y_k = 1), (annotator, class)
    sp_jk   ~ Beta(specificity_prior)           P(x_k = 0 | y_k = 0), (annotator, class)
    m_i     ~ Categorical(pi)                   the item's component
    y_ik    ~ Bernoulli(phi_{m_i k})            its true labels, independent given m_i
    x_rk    ~ Bernoulli(se_{j_r k})       if y_{i_r k} = 1
            ~ Bernoulli(1 - sp_{j_r k})   if y_{i_r k} = 0

with each response's log-likelihood multiplied by the reliability ``gamma``. Marginally the
true sets are a Bernoulli mixture (latent class model), which can represent any joint
distribution of the ``K`` labels with enough components; with one component the labels are
independent and the model is ``K`` binary annotator models sharing nothing.

**Components.** ``components`` defaults to ``min(K + 1, 8)``: room for a component per label
plus one for the empty or background set, capped because a sweep costs ``items x M x K``.
``M`` is an upper bound, not a guess of the number of patterns: with ``alpha < d / 2`` (``d =
K`` parameters per component) the posterior of an overfitted mixture empties the extra
components (Rousseau & Mengersen 2011, *JRSS B* 73, 689–710), so the default ``alpha = 1/2``
lets the data choose how many are used for every ``K >= 2``.

**Priors and why.** ``rate_prior = (1, 1)``: nothing known of a pattern's labels;
``sensitivity_prior = (2, 1)`` (mean 2/3, worth three responses): missed tags are common, and
an annotator who tends to skip tags should be allowed a sensitivity near one half;
``specificity_prior = (4, 1)`` (mean 0.8, as Dawid–Skene's default diagonal): false tags are
rarer. Both above one half, they orient each label: the likelihood is unchanged when a label's
truth is flipped with ``(se, sp) -> (1 - sp, 1 - se)``, and the priors (with the chains'
start at the majority) choose the reading in which annotators beat chance
(:func:`label_flip_check` counts the draws outside it).

**Plausibility** ``(item, class)`` is, per draw, ``P(y_ik = 1 | theta, x)`` with both the
component and the true labels summed out (Rao–Blackwellised): **one probability per label,
not a simplex over the classes** — an item's row need not sum to one. Metrics for these
marginals are in :mod:`plausible.metrics.multi_label`; set-level quantities (exact-set
accuracy, F1) need the joint of an item's labels, which :func:`draw_label_sets` draws. Each
item's posterior over the mixture components (its label pattern) is
:func:`component_membership`.

**Inference.** ``gibbs=True``: the exact two-block Gibbs sampler of
:class:`~plausible.models.multi_label.sampler.MultiLabelKernel` (``theta | m, y``, then
``(m, y) | theta`` with ``m`` drawn with ``y`` summed out), declared as the model's kernel for
:func:`plausible.sample` and as its PyMC step. The PyMC graph is the same in both builds, ``y``
summed out label by label given ``m`` (the likelihood factorises over labels given the
component), then ``m`` by a log-sum-exp::

    log p(x_i | theta) = logsumexp_m(log pi_m + sum_k logaddexp(log phi_mk + gamma L1_ik,
                                                                 log(1 - phi_mk) + gamma L0_ik))

(``L1, L0``: :func:`~plausible.models.multi_label.sampler.label_log_likelihoods`), so with
``gibbs=False`` NUTS samples the same posterior (the independent check; any real reliability
on both routes, the Gibbs conditionals staying conjugate).

**Label switching and convergence.** The components are exchangeable. The trace records
``component_prior`` and ``label_rate`` with the components sorted by decreasing weight
(Stephens 2000's ordering constraint, applied to the Gibbs draws; NUTS records them as
sampled, so sort before comparing); judge convergence on the permutation-invariant
quantities: ``plausibility``, ``sensitivity``, ``specificity`` and ``label_prevalence (class)
= sum_m pi_m phi_mk``.

**Per-item log-likelihood** (``az.loo``): the display above per draw (:func:`log_likelihood`).
:func:`replicate_label_sets` replicates responses in the observed design and
:func:`label_set_predictive_check` compares label rates, pairwise co-occurrence and set
sizes with the data: a model without label dependence (``components=1``) fails the
co-occurrence check on data whose labels come in patterns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from plausible.data.label_sets import LabelSets
from plausible.data.validation import positive, positive_integer
from plausible.data.tables import reads
from plausible.diagnostics.annotation_predictive import thinned_draws
from plausible.diagnostics.predictive_statistics import mid_p_value
from plausible.inference.declarations import declare_log_likelihood
from plausible.inference.bridges.as_pymc_step import declare_kernel
from plausible.models.multi_label.sampler import (Design, MultiLabelKernel,
                                                     component_posterior, component_terms,
                                                     item_log_likelihoods,
                                                     label_log_likelihoods, label_posterior)
from plausible.maths.categorical import categorical_draws
from plausible.metrics.chunks import iter_sample_blocks
from plausible.models.model_entry import ModelEntry
from plausible.metrics.meaning import LABEL_MARGINALS

MAX_DEFAULT_COMPONENTS = 8


def default_components(n_classes: int) -> int:
    """``min(K + 1, 8)`` (module docstring)."""
    return min(n_classes + 1, MAX_DEFAULT_COMPONENTS)


def _pair(name, value):
    a, b = (positive(name, v) for v in value)
    return a, b


@reads("label_sets")
def build(data: LabelSets, *, reliability: float = 1, components: int | None = None,
          component_concentration: float = 0.5, rate_prior: tuple = (1.0, 1.0),
          sensitivity_prior: tuple = (2.0, 1.0), specificity_prior: tuple = (4.0, 1.0),
          gibbs: bool = True) -> pm.Model:
    """PyMC model of the multi-label latent-class model (module) for ``data``, label sets (a
    long ``task, worker, label`` DataFrame is read by :meth:`LabelSets.from_frame`).

    Free variables ``component_prior (component,)``, ``label_rate (component, class)``,
    ``sensitivity (annotator, class)``, ``specificity (annotator, class)``; deterministics
    ``plausibility (item, class)`` (per label ``P(y_ik = 1 | theta, x)``, not a simplex) and
    ``label_prevalence (class,)``. ``reliability``: any real > 0; ``components``: ``M``
    (default :func:`default_components`); ``component_concentration``: ``alpha``; the
    ``*_prior`` pairs: ``(a, b)`` of the Beta priors; ``gibbs``: :func:`plausible.sample` runs
    the exact Gibbs kernel, False leaves the summed-out model to NUTS.
    """
    if not isinstance(data, LabelSets):
        raise TypeError(f"data must be plausible.data.label_sets.LabelSets, got "
                        f"{type(data).__name__}")
    gamma = positive("reliability", reliability)
    M = default_components(data.n_classes) if components is None else positive_integer(
        "components", components)
    alpha = positive("component_concentration", component_concentration)
    rate, sens, spec = (_pair(name, value) for name, value in (
        ("rate_prior", rate_prior), ("sensitivity_prior", sensitivity_prior),
        ("specificity_prior", specificity_prior)))
    I, K = data.n_items, data.n_classes
    coords = {"item": data.items, "class": data.classes, "annotator": data.annotators,
              "component": np.arange(M)}
    item, j = data.item, data.annotator
    x = data.sets.astype(np.float64)
    with pm.Model(coords=coords) as model:
        pm.Data("reliability", gamma)
        pi = pm.Dirichlet("component_prior", a=np.full(M, alpha), dims="component")
        phi = pm.Beta("label_rate", *rate, dims=("component", "class"))
        se = pm.Beta("sensitivity", *sens, dims=("annotator", "class"))
        sp = pm.Beta("specificity", *spec, dims=("annotator", "class"))
        log_se, log1m_se, log_sp, log1m_sp = pt.log(se), pt.log1p(-se), pt.log(sp), pt.log1p(-sp)
        per1 = log1m_se[j] + x * (log_se[j] - log1m_se[j])
        per0 = log_sp[j] + x * (log1m_sp[j] - log_sp[j])
        L1 = pt.inc_subtensor(pt.zeros((I, K))[item], per1)
        L0 = pt.inc_subtensor(pt.zeros((I, K))[item], per0)
        A1 = pt.log(phi)[None] + gamma * L1[:, None, :]
        T = pt.logaddexp(A1, pt.log1p(-phi)[None] + gamma * L0[:, None, :])
        joint = pt.log(pi)[None] + T.sum(axis=2)
        per_item = pt.logsumexp(joint, axis=1)
        pm.Potential("label_sets", per_item.sum())
        w = pt.exp(joint - per_item[:, None])
        pm.Deterministic("plausibility", (w[:, :, None] * pt.exp(A1 - T)).sum(axis=1),
                         dims=("item", "class"))
        pm.Deterministic("label_prevalence", pt.dot(pi, phi), dims="class")
    if gibbs:
        kernel = MultiLabelKernel(data, components=M, alpha=alpha, rate_prior=rate,
                                  sensitivity_prior=sens, specificity_prior=spec, gamma=gamma)
        declare_kernel(model, kernel, coords=coords, constant_data={"reliability": gamma})
    declare_log_likelihood(model, "label_sets", lambda trace: log_likelihood(trace, data),
                           observed=data.to_dataarray())
    return model


def _parameters(posterior, chain, draw) -> dict[str, np.ndarray]:
    """The parameters at the draws ``(chain, draw)``, float64 ``(sample, ...)``."""
    return {name: np.asarray(posterior[name].transpose("chain", "draw", ...).values,
                             dtype=np.float64)[chain, draw]
            for name in ("component_prior", "label_rate", "sensitivity", "specificity")}


def _logs(theta: dict[str, np.ndarray]):
    """``log pi, log phi, log(1 - phi), log se, log(1 - se), log sp, log(1 - sp)``."""
    with np.errstate(divide="ignore"):
        out = [np.log(theta["component_prior"])]
        for name in ("label_rate", "sensitivity", "specificity"):
            out += [np.log(theta[name]), np.log1p(-theta[name])]
    return out


def log_likelihood(trace, data: LabelSets) -> xr.DataArray:
    """Per-item ``log p(x_i | theta)`` (both ``y`` and ``m`` summed out; module docstring),
    ``(chain, draw, item)``, in blocks of draws."""
    posterior = trace["posterior"]
    gamma = float(trace["constant_data"]["reliability"])
    n_chain, n_draw = posterior.sizes["chain"], posterior.sizes["draw"]
    chain, draw = np.divmod(np.arange(n_chain * n_draw), n_draw)
    design = Design(data)
    M = posterior.sizes["component"]
    out = np.empty((chain.size, data.n_items))
    width = data.n_items * M * data.n_classes + 2 * data.n_responses * data.n_classes
    for block, _ in iter_sample_blocks((chain.size,), width):
        log_pi, log_phi, log1m_phi, *annotators = _logs(_parameters(posterior, chain[block],
                                                                    draw[block]))
        L1, L0 = label_log_likelihoods(design, *annotators)
        T, _ = component_terms(log_phi, log1m_phi, gamma, L1, L0)
        out[block] = item_log_likelihoods(log_pi, T)
    return xr.DataArray(out.reshape(n_chain, n_draw, data.n_items),
                        dims=("chain", "draw", "item"),
                        coords={"chain": posterior["chain"].values,
                                "draw": posterior["draw"].values, "item": data.items})


def aligned_components(rates: np.ndarray) -> np.ndarray:
    """For each draw of the components' label rates ``rates (sample, component, class)``, the
    permutation ``perm (sample, component)`` that matches its components to a reference:
    ``rates[s, perm[s, m]]`` is reference component ``m``. Pivotal reordering (Marin,
    Mengersen & Robert 2005): each draw is assigned to the pivot (the first draw, then the mean
    of the draws so aligned) by the least squared distance between rate profiles (Hungarian
    assignment). The trace's own order, by decreasing weight in each draw, switches between
    components of similar weight; the rate profiles are what tells patterns apart."""
    from scipy.optimize import linear_sum_assignment

    reference = rates[0]
    for _ in range(2):
        cost = ((reference[None, :, None, :] - rates[:, None, :, :]) ** 2).sum(axis=-1)
        perm = np.stack([linear_sum_assignment(c)[1] for c in cost])
        reference = np.take_along_axis(rates, perm[..., None], axis=1).mean(axis=0)
    return perm


def component_membership(trace, data: LabelSets, *, draws: int = 500) -> xr.DataArray:
    """Each item's posterior over the mixture components (its label pattern), ``P(m_i = m |
    x)``, float64 ``(item, component)``: the mean over ``draws`` thinned posterior draws of
    ``P(m_i = m | theta, x)`` (the labels summed out; Rao–Blackwellised), with every draw's
    components matched by their label rates (:func:`aligned_components`) and numbered by
    decreasing mean weight, so component 0 is the most common pattern. Matched components
    keep apart patterns of equal weight, which the trace's per-draw order by weight mixes."""
    posterior = trace["posterior"]
    gamma = float(trace["constant_data"]["reliability"])
    chain, draw = thinned_draws(posterior, draws)
    design = Design(data)
    theta = _parameters(posterior, chain, draw)
    perm = aligned_components(theta["label_rate"])
    weight = np.take_along_axis(theta["component_prior"], perm, axis=1).mean(axis=0)
    perm = perm[:, np.argsort(-weight, kind="stable")]
    M = perm.shape[1]
    total = np.zeros((data.n_items, M))
    width = data.n_items * M * (data.n_classes + 1) + 2 * data.n_responses * data.n_classes
    for block, _ in iter_sample_blocks((chain.size,), width):
        log_pi, log_phi, log1m_phi, *annotators = _logs(
            {name: value[block] for name, value in theta.items()})
        L1, L0 = label_log_likelihoods(design, *annotators)
        T, _ = component_terms(log_phi, log1m_phi, gamma, L1, L0)
        w = component_posterior(log_pi, T)  # (sample, item, component), the trace's order
        total += np.take_along_axis(w, perm[block][:, None, :], axis=2).sum(axis=0)
    return xr.DataArray(total / chain.size, dims=("item", "component"),
                        coords={"item": data.items, "component": np.arange(M)},
                        name="component_membership")


def draw_label_sets(trace, data: LabelSets, *, draws: int = 500, seed: int | None = None
                    ) -> np.ndarray:
    """Posterior draws of the items' true label sets, bool ``(sample, item, class)``: at each
    of ``draws`` thinned posterior draws ``theta``, ``m_i ~ P(m_i | theta, x)`` and then
    ``y_ik ~ P(y_ik | m_i, theta, x)`` (exact, with the dependence among an item's labels that
    the per-label plausibilities leave out)."""
    posterior = trace["posterior"]
    gamma = float(trace["constant_data"]["reliability"])
    chain, draw = thinned_draws(posterior, draws)
    design, rng = Design(data), np.random.default_rng(seed)
    out = np.empty((chain.size, data.n_items, data.n_classes), dtype=bool)
    M = posterior.sizes["component"]
    width = 2 * data.n_items * M * data.n_classes + 2 * data.n_responses * data.n_classes
    for block, _ in iter_sample_blocks((chain.size,), width):
        log_pi, log_phi, log1m_phi, *annotators = _logs(_parameters(posterior, chain[block],
                                                                    draw[block]))
        L1, L0 = label_log_likelihoods(design, *annotators)
        T, A1 = component_terms(log_phi, log1m_phi, gamma, L1, L0)
        m = categorical_draws(rng, component_posterior(log_pi, T))
        q = np.take_along_axis(label_posterior(T, A1), m[..., None, None], axis=-2)[..., 0, :]
        out[block] = rng.random(q.shape) < q
    return out


def replicate_label_sets(trace, data: LabelSets, *, draws: int = 500, seed: int | None = None
                         ) -> np.ndarray:
    """Replicated responses in the observed design, bool ``(sample, response, class)``: for
    each of ``draws`` thinned draws, new items ``m_i ~ pi``, ``y_ik ~ Bernoulli(phi_{m_i k})``,
    then each response's labels ``x_rk ~ Bernoulli(se_{j_r k})`` where ``y = 1``, else
    ``Bernoulli(1 - sp_{j_r k})``."""
    posterior = trace["posterior"]
    chain, draw = thinned_draws(posterior, draws)
    theta = _parameters(posterior, chain, draw)
    rng = np.random.default_rng(seed)
    S, I, K = chain.size, data.n_items, data.n_classes
    m = categorical_draws(rng, theta["component_prior"][:, None, :], (S, I))
    y = rng.random((S, I, K)) < np.take_along_axis(theta["label_rate"], m[..., None], axis=1)
    yr = y[:, data.item]
    se, sp = theta["sensitivity"][:, data.annotator], theta["specificity"][:, data.annotator]
    return rng.random(yr.shape) < np.where(yr, se, 1.0 - sp)


def label_set_statistics(sets: np.ndarray, classes) -> dict[str, pd.DataFrame]:
    """Statistics of responses ``sets`` bool ``(sample, response, class)``, each a DataFrame
    (sample x entry): ``label_rate`` (the share of responses carrying each label),
    ``co_occurrence`` (the share carrying both labels of each pair ``k < l``, columns
    ``"k & l"``) and ``set_size`` (the share of responses with ``0..K`` labels)."""
    sets = np.asarray(sets, dtype=bool)
    S, R, K = sets.shape
    f = sets.astype(np.float64)
    rows, cols = np.triu_indices(K, k=1)
    both = np.einsum("srk,srl->skl", f, f)[:, rows, cols] / R
    sizes = sets.sum(axis=2)
    size_share = np.stack([np.bincount(s, minlength=K + 1) for s in sizes]) / R
    names = [str(c) for c in classes]
    return {"label_rate": pd.DataFrame(f.mean(axis=1), columns=names),
            "co_occurrence": pd.DataFrame(both, columns=[f"{names[a]} & {names[b]}"
                                                         for a, b in zip(rows, cols)]),
            "set_size": pd.DataFrame(size_share, columns=np.arange(K + 1))}


def label_set_predictive_check(data: LabelSets, replicated: np.ndarray) -> pd.DataFrame:
    """Observed statistics of :func:`label_set_statistics` against replicates
    (:func:`replicate_label_sets`): one row per statistic and entry (index ``(statistic,
    entry)``) with the observed value, the replicates' 5 % and 95 % quantiles and the mid
    p-value ``P(T_rep > T_obs) + P(T_rep = T_obs) / 2`` (near 0 or 1: misfit)."""
    observed = label_set_statistics(data.sets[None], data.classes)
    replicates = label_set_statistics(replicated, data.classes)
    tables = []
    for name, rep in replicates.items():
        obs = observed[name].iloc[0]
        tables.append(pd.DataFrame({
            "observed": obs.to_numpy(), "replicated_5%": rep.quantile(0.05).to_numpy(),
            "replicated_95%": rep.quantile(0.95).to_numpy(),
            "p_value": mid_p_value(rep.to_numpy(), obs.to_numpy()[None])},
            index=pd.MultiIndex.from_product([[name], rep.columns], names=["statistic",
                                                                           "entry"])))
    return pd.concat(tables)


def label_flip_check(trace) -> xr.DataArray:
    """Share of draws, per label, in which the annotators beat chance on average (mean over
    annotators of ``se_jk + sp_jk > 1``), ``(class,)``: below 1, some draws read the label
    flipped (module docstring)."""
    posterior = trace["posterior"]
    total = (posterior["sensitivity"] + posterior["specificity"]).mean("annotator")
    return (total > 1).mean(("chain", "draw"))



def predictive_check(trace, data: LabelSets, *, draws: int = 500, seed: int | None = None
                     ) -> pd.DataFrame:
    """:func:`label_set_predictive_check` of ``draws`` sets of replicated label sets
    (:func:`replicate_label_sets`)."""
    return label_set_predictive_check(
        data, replicate_label_sets(trace, data, draws=draws, seed=seed))


def pattern_columns(trace, sets: LabelSets) -> pd.DataFrame:
    """Per item (index, the ids): ``pattern``, its most probable mixture component (0 the
    heaviest; :func:`component_membership`) and ``pattern_probability``, its posterior
    probability."""
    membership = component_membership(trace, sets)
    p = membership.values
    best = p.argmax(axis=1)
    return pd.DataFrame({"pattern": membership["component"].values[best],
                         "pattern_probability": p[np.arange(best.size), best]},
                        index=pd.Index(membership["item"].values, name="item"))


def label_rates(posterior) -> tuple[xr.DataArray, xr.DataArray]:
    """The draws of each annotator's sensitivity and specificity per label, each ``(chain,
    draw, annotator, class)``."""
    return posterior["sensitivity"], posterior["specificity"]


def annotator_parameters(posterior) -> dict[str, np.ndarray]:
    """What the report shows of each annotator: its sensitivity and specificity averaged over
    the labels, ``mean_sensitivity`` and ``mean_specificity``, each ``(sample, annotator)``."""
    out = {}
    for name in ("sensitivity", "specificity"):
        var = posterior[name].mean("class").transpose("chain", "draw", "annotator")
        out[f"mean_{name}"] = var.values.reshape(-1, var.sizes["annotator"])
    return out

__all__ = ["aligned_components", "build", "component_membership", "default_components", "draw_label_sets",
           "label_flip_check", "label_set_predictive_check", "label_set_statistics",
           "log_likelihood", "replicate_label_sets"]


ENTRIES = (
    ModelEntry("multi-label", build, "label_sets", "tempering", False,
               "multi-label sets: a Bernoulli mixture over the items' true label sets with "
               "per-annotator, per-label sensitivity and specificity, exact Gibbs",
               plausibility=LABEL_MARGINALS, annotator_parameters=annotator_parameters,
               label_rates=label_rates, predictive_check=predictive_check,
               item_columns=pattern_columns, label_set_draws=draw_label_sets,
               annotator_note="mean_sensitivity and mean_specificity: each annotator's "
               "probability of marking a label the item carries, and of leaving out one it "
               "does not, averaged over the labels, with 90 % intervals."),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
