"""A real classifier with thin votes: plausible beside cleanlab's CROWDLAB on CIFAR-10H.

CIFAR-10H (Peterson et al. 2019) is thinned to 1-5 of its votes per image (uniformly, a
seed per thinning). CROWDLAB is given them as anonymous vote slots (annotator ``j`` is an
image's ``j``-th drawn vote, an ``(image, slot)`` matrix), plausible as what they are, vote
counts per image with no annotator named (``pl.data.Votes``). Both methods also get the
ResNet-18's out-of-fold probabilities (Goh, Tkachenko & Mueller 2022). Against the official
CIFAR-10 labels, per thinning seed and method:

* ``accuracy`` of the consensus class;
* ``auroc``: how well doubt ranks the images whose consensus is wrong first (plausible: 1 -
  the consensus's plausibility; CROWDLAB: minus its consensus quality score);
* ``ece``: expected calibration error (10 equal-width bins) of the consensus's probability
  (plausible: its plausibility; CROWDLAB: its quality score, the consensus's probability
  under its weighted ensemble);
* ``seconds`` of the fit (plausible: ``pl.aggregate`` at its defaults, in this process, with
  PyTensor/numba caches warm).

Rows: ``crowdlab`` (cleanlab at its defaults), ``plausible+classifier``
(``pl.aggregate(votes, predictions=P)`` at its defaults: ``votes-dawid-skene``),
``plausible`` (the same model on the votes alone: what the classifier adds), ``majority``
and ``classifier`` alone. Measured (5 seeds, means): accuracy 0.9847 against CROWDLAB's
0.9834, AUROC 0.9635 against 0.9530 (ahead on every seed), ECE 0.0093 against 0.1102; the
votes alone 0.9710, majority 0.9706, the classifier alone 0.9504.

``--coverage``: the classifier's accuracy from the thin votes without the classifier (the
evaluated classifier kept out of its truth), its 90 % interval, against the accuracy from
all ~50 votes per image with the same model, for thinnings to 1-5, 1, 3 and 5 votes; by
default with the default label model on the slots as labels, or ``--coverage-model`` on
the counts. Measured (3 seeds each): none covers. The default label model: 0.925 from 1-5
votes, 0.939 from 3 (interval 0.001 wide), 0.944 from 5, against 0.949 from all votes; one
vote per image identifies no vote accuracy at all (0.33-0.37, interval 0.10-0.89). A vote
that disagrees with the classifier marks a hard image, on which votes are less often right
than a model of independent votes assumes, so it underrates the classifier.
``votes-dawid-skene`` does worse without a classifier: 0.921 from 1-5 votes, 0.943 from 5;
with exactly 3 votes an image its ``kappa`` falls to 0.17 (each image's votes nearly
unanimous on a class drawn from a diffuse ``psi_c``, which barely ties the votes to the
class) and the estimate to 0.57-0.60.

    python benchmarks/bench_crowdlab_cifar10h.py --seeds 5 [--coverage 3 [--coverage-model M]]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import plausible as pl


MODEL = "votes-dawid-skene"
"""The model of anonymous votes with one true class per image: what ``pl.aggregate(votes,
predictions=P)`` fits by default, and the votes-only rows fit."""


def data_dir() -> Path:
    root = os.environ.get("PLAUSIBLE_DATA") or Path(__file__).resolve().parents[2] / "shared/data"
    return Path(root) / "cifar10h"


def thinned(counts: np.ndarray, seed: int, low: int = 1, high: int = 5) -> np.ndarray:
    """``(image, high)`` vote slots, NaN where empty: each image's ``low..high`` votes drawn
    without replacement from its CIFAR-10H votes."""
    rng = np.random.default_rng(seed)
    n = rng.integers(low, high + 1, counts.shape[0])
    slots = np.full((counts.shape[0], high), np.nan)
    for i, row in enumerate(counts):
        slots[i, :n[i]] = rng.choice(np.repeat(np.arange(row.size), row), n[i], replace=False)
    return slots


def long_table(slots: np.ndarray) -> pd.DataFrame:
    """The slots as labels (``task, worker, label``), slot ``j`` as annotator ``j``."""
    item, slot = np.nonzero(~np.isnan(slots))
    return pd.DataFrame({"task": item, "worker": slot, "label": slots[item, slot].astype(int)})


def ece(confidence: np.ndarray, correct: np.ndarray, bins: int = 10) -> float:
    which = np.minimum((confidence * bins).astype(int), bins - 1)
    return float(sum(abs(confidence[which == b].mean() - correct[which == b].mean())
                     * (which == b).mean() for b in range(bins) if (which == b).any()))


def scores(consensus, confidence, doubt, truth) -> dict:
    from sklearn.metrics import roc_auc_score

    wrong = consensus != truth
    return {"accuracy": 1 - wrong.mean(), "auroc": roc_auc_score(wrong, doubt),
            "ece": ece(confidence, ~wrong)}


def vote_counts(slots: np.ndarray, n_classes: int) -> pl.data.Votes:
    """The slots' votes counted per image: what plausible is given (anonymous votes)."""
    counts = np.stack([(slots == c).sum(1) for c in range(n_classes)], axis=1)
    return pl.data.Votes(counts, np.arange(len(slots)), np.arange(n_classes))


def plausible_run(votes, truth, predictions, seed, model=None) -> dict:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = pl.aggregate(votes, model, seed=seed, predictions=predictions)
    seconds = time.perf_counter() - start
    p = result.plausibility.transpose("item", "class").values
    order = result.plausibility["item"].values.astype(int)
    p = p[np.argsort(order)]
    row = scores(p.argmax(1), p.max(1), 1 - p.max(1), truth)
    row["seconds"] = seconds
    row["converged"] = bool(pl.diagnostics.convergence_report(result.trace).converged)
    if predictions is not None:
        row["temperature"] = float(result.trace["posterior"]["temperature"].mean())
    return row


def crowdlab_run(slots, truth, predictions) -> dict:
    from cleanlab.multiannotator import get_label_quality_multiannotator

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quality = get_label_quality_multiannotator(pd.DataFrame(slots), predictions,
                                                   verbose=False)["label_quality"]
    seconds = time.perf_counter() - start
    q = quality["consensus_quality_score"].to_numpy()
    row = scores(quality["consensus_label"].to_numpy(), q, -q, truth)
    row["seconds"] = seconds
    return row


def coverage(counts, predictions, seeds, model=None) -> pd.DataFrame:
    """Per thinning, the ResNet-18's accuracy from thin votes (mean and 90 % interval of
    ``model`` on the vote counts, or by default of the default label model on the slots as
    labels, without the classifier) against that from every vote with the same model."""
    from plausible import metrics

    predicted = pd.Series(predictions.argmax(1))

    def accuracy(slots, seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = (pl.aggregate(long_table(slots), seed=seed) if model is None else
                      pl.aggregate(vote_counts(slots, counts.shape[1]), model, seed=seed))
        items = result.plausibility["item"].values.astype(int)
        member = np.zeros((items.size, counts.shape[1]), dtype=bool)
        member[np.arange(items.size), predicted.to_numpy()[items]] = True
        return metrics.ua_coverage(result.trace, member).mean("item").values.ravel()

    every = counts.sum(1)
    slots = np.full((counts.shape[0], every.max()), np.nan)
    for i, row in enumerate(counts):
        slots[i, :every[i]] = np.repeat(np.arange(row.size), row)
    full = accuracy(slots, 0).mean()
    rows = []
    for low, high in ((1, 5), (1, 1), (3, 3), (5, 5)):
        for seed in seeds:
            draws = accuracy(thinned(counts, 100 + seed, low, high), seed)
            lo, hi = np.quantile(draws, [0.05, 0.95])
            rows.append({"votes": f"{low}-{high}" if low != high else str(low), "seed": seed,
                         "mean": draws.mean(), "lower": lo, "upper": hi, "full": full,
                         "covered": lo <= full <= hi})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--coverage", type=int, default=0, metavar="SEEDS",
                        help="thinning seeds per number of votes for the coverage study")
    parser.add_argument("--coverage-model", default=None, metavar="MODEL",
                        help="a votes model for the coverage study (default: the default "
                             "label model on the slots as labels)")
    args = parser.parse_args()
    folder = data_dir()
    counts = np.load(folder / "cifar10h-counts.npy")
    truth = np.load(folder / "cifar10_test_labels.npy")
    predictions = np.load(folder / "resnet18_pred_probs.npy").astype(np.float64)
    predictions /= predictions.sum(axis=1, keepdims=True)
    rows = []
    for seed in range(args.seeds):
        slots = thinned(counts, seed)
        rows.append({"seed": seed, "method": "crowdlab", **crowdlab_run(slots, truth, predictions)})
        votes = vote_counts(slots, counts.shape[1])
        rows.append({"seed": seed, "method": "plausible+classifier",
                     **plausible_run(votes, truth, predictions, seed)})
        rows.append({"seed": seed, "method": "plausible",
                     **plausible_run(votes, truth, None, seed, MODEL)})
        share = votes.counts / votes.counts.sum(1, keepdims=True)
        rows.append({"seed": seed, "method": "majority",
                     **scores(share.argmax(1), share.max(1), 1 - share.max(1), truth)})
        rows.append({"seed": seed, "method": "classifier",
                     **scores(predictions.argmax(1), predictions.max(1), 1 - predictions.max(1),
                              truth)})
        print(pd.DataFrame(rows[-5:]).to_string(index=False), flush=True)
    if rows:
        table = pd.DataFrame(rows)
        print("\nmean over seeds:")
        print(table.drop(columns="seed").groupby("method", sort=False).mean(numeric_only=True)
              .to_string(float_format="%.4f"))
    if args.coverage:
        cover = coverage(counts, predictions, range(args.coverage), args.coverage_model)
        print(cover.to_string(index=False, float_format="%.4f"))
        print(cover.groupby("votes")["covered"].mean().to_string())
        print(f"covered in {cover['covered'].mean():.0%} of {len(cover)} thinnings")


if __name__ == "__main__":
    main()
