"""Which label models ``model="auto"`` should choose among: a simulation study of real-crowd
structure, then the same numbers on Snow et al.'s tasks with gold.

Every label model is fitted at its defaults (``pl.aggregate(labels, name, seed=s)``:
``draws="auto"``) to each data set; per fit: the time, the convergence status, the PSIS-LOO
elpd, and against the truth (simulation) or gold (Snow) the accuracy of the most plausible
class and the Brier score ``sum_c (p_ic - 1[c = y_i])^2`` averaged over items. Beside them the
raw vote shares and majority vote (ties to the lowest class); on two-class data Carpenter's
annotator-beta model too. For each candidate set (``auto``: the data's
:func:`plausible.aggregation.auto_candidates`), two rows: the model
:func:`plausible.diagnostics.model_selection.select` chooses on those same fits, and the
stack of the converged candidates of its meaning, scored on the mixture of their draws
(:func:`plausible.aggregation.stacked_trace`). ``pl.aggregate(labels)`` runs exactly this
(the same seed and settings give the same fits), so a set's stacked row says what ``auto``
with that set returns.

Data: :func:`plausible.data.crowd_simulation.simulate_crowd` (long-tailed workloads, most
workers with a handful of labels, errors to the neighbouring classes, 10 % spammers, 3 +
Poisson(2) labels an item) with no ambiguous items and with 30 % of the items split between
two neighbouring classes (the truth is then the item's most plausible class), ``--labels``
labels, ``--seeds`` seeds each; with ``$PLAUSIBLE_DATA``, RTE, TEMP and WSD (Snow et al.
2008), reported but not used to choose (the choice is made on simulations only).

    .venv/bin/python benchmarks/study_auto_candidates.py [--labels 2000] [--seeds 3]
        [--snow]

**Result, with the one-coin ambiguity model** (2026-11-28, ``--seeds 5 --snow``, two cores;
``ambiguity-one-coin`` now among the single models, so "best single model" may be it). Gap of
accuracy and of Brier score to the best single model, mean and worst over the 13 data sets:

=================================================  ========  =======  ==========  ==========
candidate set                                      acc. gap  worst    Brier gap   worst
=================================================  ========  =======  ==========  ==========
auto, stacked (what auto returns)                  0.0030    0.0100   0.0017      0.0196
glad, hierarchical DS, ambiguity one-coin, stacked 0.0030    0.0100   0.0053      0.0287
glad, hierarchical DS, both ambiguity, stacked     0.0018    0.0100   0.0031      0.0243
glad, one-coin, mace, ambiguity, stacked           0.0095    0.0400   0.0058      0.0336
all seven, stacked                                 0.0020    0.0100   0.0032      0.0243
=================================================  ========  =======  ==========  ==========

``ambiguity-one-coin`` alone: on the ambiguous crowds it names the more plausible class of
0.836 of the items (``ambiguity-dawid-skene`` 0.821, GLAD 0.840), and on Snow's RTE and TEMP
its Brier score against gold is the lowest of every model (0.110 and 0.093). As a candidate it
does not help ``auto``: LOO ranks it first on one crowd without ambiguous items (seed 3, 2.3
elpd ahead of GLAD), where its split plausibilities score 0.029 worse against the true class
than GLAD's, and on two ambiguous ones (seeds 1 and 4; on seed 4 its accuracy is 0.0075 below
the best single model's). Swapping it for ``ambiguity-dawid-skene`` also loses
TEMP, where ``ambiguity-dawid-skene`` leads LOO by 880 elpd. The candidate set is unchanged.
Where ``auto`` still misses (accuracy on the ambiguous crowds of seeds 0, 3 and 4, 0.0075 to
0.01 below the best single model; Brier score on seed 3, 0.0196 above), hierarchical
Dawid-Skene leads LOO (weights 0.55-0.70) but misnames clear items: on seed 3 it names 0.871
of the clear items against GLAD's 0.935, moving 12 of 68 clear items of class 1 to class 0.
Its pooled confusion matrices take up the 0/1 splits of the ambiguous class-0 items as a
shared 0-to-1 confusion, which predicts the labels better (LOO) and names the class worse.

**Result, stacking** (2026-11-27, ``--seeds 5 --snow``, two cores). For each candidate set,
the row without "stacked" is the single model LOO ranks first; "stacked" is what
``pl.aggregate(labels)`` now returns: the converged candidates of the chosen model's meaning
combined by Bayesian stacking (the mixture of their draws). Gap of accuracy (best single
model minus the set's) and of Brier score (the set's minus the best single model's), mean and
worst over the 13 data sets (10 simulated, RTE, TEMP, WSD):

==========================================  ========  =======  ==========  ==========
candidate set                               acc. gap  worst    Brier gap   worst
==========================================  ========  =======  ==========  ==========
auto (glad, hierarchical DS, ambiguity)     0.0086    0.0525   0.0080      0.0606
auto, stacked (what auto returns)           0.0021    0.0125   0.0003      0.0195
Dawid-Skene, one-coin, ambiguity, stacked   0.0034    0.0225   0.0010      0.0100
glad, ambiguity (stacked: the same)         0.0095    0.0400   0.0055      0.0336
all six, stacked                            0.0025    0.0125   0.0001      0.0195
==========================================  ========  =======  ==========  ==========

Stacking GLAD with hierarchical Dawid-Skene (weights 0.53-0.71 to the one LOO ranks first)
is what closes the gaps: the two are within two standard errors of each other in elpd on most
of these crowds, and the mixture is closer to the truth than either. The stacked ``auto`` is
within 0.01 of the best single model's Brier score on 12 of the 13 data sets and within 0.005
of its accuracy on 10; the exception on both is the ambiguous crowd of seed 3, where
hierarchical Dawid-Skene leads LOO by 70 elpd (weight 0.70) but is the least accurate model
against the truth (0.770 against GLAD's 0.8225; stacked 0.810, Brier 0.299 against 0.280):
LOO scores the labels, and on items genuinely split between two classes the model that
predicts the labels best is not the one that names the more plausible class best. The
stacked ``auto``'s Brier score is below the vote shares' on every data set (by 0.0017 on WSD
to 0.16). The ambiguity model never won LOO on the simulated crowds (their ambiguity, between
neighbouring classes with 5 labels an item and most workers with a handful, is not identified
by the labels); it does on TEMP, where its Brier score, 0.096, is the lowest of every model.

**Result, choosing one model** (2026-11-27, 2,000 labels, seeds 0-2, before stacking; the
choice of candidate set was made on these six simulated data sets only):

=========================================  =========  =========  ========  ========  ======
candidate set                              Brier gap  worst      acc. gap  worst     time
=========================================  =========  =========  ========  ========  ======
glad, hierarchical DS, ambiguity (chosen)  0.0046     0.0126     0.0046    0.0125    53 s
Dawid-Skene, one-coin, ambiguity           0.0075     0.0204     0.0104    0.0325    27 s
glad, ambiguity                            0.0058     0.0190     0.0121    0.0350    31 s
all six                                    0.0046     0.0126     0.0046    0.0125    65 s
glad alone                                 0.0026     0.0059     0.0071    0.0225    10 s
=========================================  =========  =========  ========  ========  ======

GLAD alone was closest in Brier score on those crowds, but a set without the ambiguity model
cannot read disagreement as ambiguity where the data say so; among the sets that hold it,
the chosen one has the smallest gaps, and adding Dawid-Skene, one-coin or MACE to it changes
no choice.
"""

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd

import plausible as pl
from plausible.data.crowd_simulation import simulate_crowd
from plausible.diagnostics.model_selection import select

MODELS = ("dawid-skene", "one-coin", "mace", "hierarchical-dawid-skene", "glad",
          "ambiguity-dawid-skene", "ambiguity-one-coin")
BINARY_MODELS = ("annotator-beta",)
"""Fitted beside :data:`MODELS` on two-class data, where ``auto`` has them as candidates."""
SETS = {
    "auto": None,  # pl.aggregation.auto_candidates of the data
    "ds, one-coin, ambiguity": ("dawid-skene", "one-coin", "ambiguity-dawid-skene"),
    "glad, ambiguity": ("glad", "ambiguity-dawid-skene"),
    "glad, one-coin, mace, ambiguity": ("glad", "one-coin", "mace", "ambiguity-dawid-skene"),
    "glad, hierarchical DS, ambiguity one-coin": ("glad", "hierarchical-dawid-skene",
                                                  "ambiguity-one-coin"),
    "glad, hierarchical DS, both ambiguity": ("glad", "hierarchical-dawid-skene",
                                              "ambiguity-dawid-skene", "ambiguity-one-coin"),
    "all seven": MODELS,
}


def scores(probabilities: np.ndarray, labels, truth: np.ndarray) -> dict:
    """Accuracy of the most probable class and the mean Brier score against ``truth`` (class
    indices in ``labels``' item order): :func:`plausible.diagnostics.proper_scores`."""
    frame = pd.DataFrame(probabilities, index=labels.items, columns=labels.classes)
    gold = pd.Series(labels.classes[truth], index=labels.items)
    return pl.diagnostics.proper_scores(frame, gold)[["accuracy", "brier"]].to_dict()


def vote_shares(labels) -> np.ndarray:
    counts = np.asarray(pl.data.Votes.from_labels(labels).counts, dtype=np.float64)
    return counts / counts.sum(axis=1, keepdims=True)


def study(name: str, labels, truth: np.ndarray, seed: int) -> list[dict]:
    rows, fits, unconverged = [], {}, {}
    shares = vote_shares(labels)
    majority = np.eye(labels.n_classes)[shares.argmax(axis=1)]
    rows.append({"data": name, "model": "vote shares", **scores(shares, labels, truth)})
    rows.append({"data": name, "model": "majority vote", **scores(majority, labels, truth)})
    for model in MODELS + (BINARY_MODELS if labels.n_classes == 2 else ()):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = pl.aggregate(labels, model, seed=seed)
            seconds = time.perf_counter() - start
            report = fit.convergence()
            elpd = (pl.diagnostics.loo(fit.trace).elpd if "log_likelihood" in fit.trace.children
                    else np.nan)
        if not report.converged:
            unconverged[model] = report.status
        fits[model] = fit
        rows.append({"data": name, "model": model, "seconds": seconds, "status": report.status,
                     "draws": fit.trace.posterior.sizes["draw"], "elpd": elpd,
                     **scores(fit.plausibility.sel(item=labels.items).values, labels, truth)})
    by_model = {row["model"]: row for row in rows}
    for set_name, members in SETS.items():
        members = pl.aggregation.auto_candidates(labels) if members is None else members
        for stacking in (False, True):
            selection = select({m: fits[m].trace for m in members}, unconverged,
                               {m: pl.models.entry(m).plausibility for m in members}
                               if stacking else None)
            if selection.stacked:  # what pl.aggregate(labels) returns: the mixture's draws
                trace = pl.aggregation.stacked_trace(
                    {m: fits[m] for m in selection.stack}, selection.stack, seed,
                    fits[selection.chosen].trace)
                result = scores(pl.metrics.posterior_mean(trace).sel(item=labels.items).values,
                                labels, truth)
            else:
                result = {key: by_model[selection.chosen][key] for key in ("accuracy", "brier")}
            chosen = " + ".join(f"{m} {w:.2f}" for m, w in selection.stack.items())
            rows.append({"data": name, "model": f"[{set_name}{', stacked' * stacking}] -> "
                                                f"{chosen}",
                         "seconds": sum(by_model[m]["seconds"] for m in members), **result})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--labels", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--snow", action="store_true", help="also RTE, TEMP, WSD with gold")
    args = parser.parse_args()
    rows = []
    for ambiguous in (0.0, 0.3):
        for seed in range(args.seeds):
            simulation = simulate_crowd(args.labels, seed, ambiguous=ambiguous)
            name = f"simulated {ambiguous:.0%} ambiguous, seed {seed}"
            rows += study(name, simulation.labels, simulation.truth, seed)
            print(pd.DataFrame([r for r in rows if r["data"] == name]).to_string(index=False),
                  flush=True)
    home = os.environ.get("PLAUSIBLE_DATA")
    if args.snow and home:
        for task in ("rte", "temp", "wsd"):
            data = pl.data.load_snow2008(task, home)
            gold = pd.Index(data.annotations.classes).get_indexer(data.gold.to_numpy())
            rows += study(task.upper(), data.annotations, gold, 0)
            print(pd.DataFrame([r for r in rows if r["data"] == task.upper()])
                  .to_string(index=False), flush=True)
    table = pd.DataFrame(rows)
    pd.set_option("display.width", 200)
    print("\nMean over the data sets of each kind:")
    table["kind"] = table["data"].str.replace(r", seed \d+", "", regex=True)
    table["model"] = table["model"].str.replace(r" -> .*", "", regex=True)
    print(table.groupby(["kind", "model"], sort=False)[["accuracy", "brier", "seconds"]]
          .mean().round(4).to_string())
    print("\nEach candidate set's gaps to the best single model (accuracy: best minus the set's;"
          " Brier: the set's minus best) and its Brier score minus the vote shares', mean and "
          "worst over the data sets:")
    print(gaps(table).groupby("model", sort=False).agg(["mean", "max"]).round(4).to_string())


def gaps(table: pd.DataFrame) -> pd.DataFrame:
    """Per data set and candidate set (the rows whose model starts with ``[``): accuracy gap
    to the best single model, Brier gap to it, and Brier score minus the vote shares'."""
    out = []
    for data, rows in table.groupby("data", sort=False):
        single = rows[rows["model"].isin(MODELS + BINARY_MODELS)]
        shares = rows.loc[rows["model"] == "vote shares", "brier"].item()
        for _, row in rows[rows["model"].str.startswith("[")].iterrows():
            out.append({"data": data, "model": row["model"],
                        "accuracy gap": single["accuracy"].max() - row["accuracy"],
                        "brier gap": row["brier"] - single["brier"].min(),
                        "brier - shares": row["brier"] - shares})
    return pd.DataFrame(out).set_index(["data", "model"])


if __name__ == "__main__":
    main()
