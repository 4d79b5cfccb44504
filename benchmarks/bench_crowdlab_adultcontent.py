"""A crowd of the panel with a classifier built honestly: AdultContent2 beside CROWDLAB.

AdultContent2 (Ipeirotis, Provost & Wang 2010): 92,721 labels of 11,040 web sites by 825
workers into four classes (G, P, R, X), 333 sites with gold. Its items are web addresses,
which is all a classifier may read: character 3-5-grams of the address (TF-IDF) into a
multinomial logistic regression, trained on the crowd's majority vote and predicting each site
out of fold (5 folds: a site's probabilities never saw its own labels), as CROWDLAB's authors
recommend for its classifier. The gold is never used to train or tune anything.

Scored on the gold sites, per method: ``accuracy`` of the consensus, ``auroc`` of doubt for a
wrong consensus (plausible: 1 - the consensus's plausibility; CROWDLAB: minus its consensus
quality score), ``ece`` of the consensus probability, ``seconds``. Rows: ``crowdlab``
(cleanlab at its defaults, the annotators as they are), ``plausible+classifier``
(``pl.aggregate(labels, predictions=P)`` at its defaults), ``plausible`` (the default label
model without it), ``majority`` and ``classifier`` alone.

Measured (seed 0, 333 gold sites): the address classifier alone 0.670; majority vote 0.763
(AUROC 0.785, ECE 0.085); the default label model 0.766 (0.708, 0.206) and with the
classifier 0.778 (0.707, 0.190), the most accurate; CROWDLAB 0.670 (0.667, 0.168), its
scores those of the classifier alone to three decimals: with 825 workers of about 100 labels
each, its consensus here follows the classifier (not investigated further). On this crowd the
classifier adds a point of accuracy to plausible, and plausible's doubt ranks the wrong
consensuses worse than majority vote's share and is worse calibrated: the crowd's labels of a
site are less independent than the label model assumes (the crowd panel page says the same of
its Brier scores).

    python benchmarks/bench_crowdlab_adultcontent.py [--seeds 1]

The other crowd of the panel with gold, HITspam, names its items by opaque HIT addresses (a
hash), so there is nothing of an item for a classifier to read.
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


def data_dir() -> Path:
    root = os.environ.get("PLAUSIBLE_DATA") or Path(__file__).resolve().parents[2] / "shared/data"
    return Path(root) / "crowds"


def ece(confidence: np.ndarray, correct: np.ndarray, bins: int = 10) -> float:
    which = np.minimum((confidence * bins).astype(int), bins - 1)
    return float(sum(abs(confidence[which == b].mean() - correct[which == b].mean())
                     * (which == b).mean() for b in range(bins) if (which == b).any()))


def scores(consensus, confidence, doubt, truth) -> dict:
    from sklearn.metrics import roc_auc_score

    wrong = consensus != truth
    return {"accuracy": 1 - wrong.mean(),
            "auroc": roc_auc_score(wrong, doubt) if 0 < wrong.sum() < wrong.size else np.nan,
            "ece": ece(confidence, ~wrong)}


def out_of_fold_probabilities(sites: np.ndarray, targets: np.ndarray, n_classes: int,
                              seed: int) -> np.ndarray:
    """``(site, class)`` probabilities of a character n-gram logistic regression of the
    majority vote on the address, each site predicted by the model of the folds without it."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline

    hosts = pd.Series(sites).str.replace(r"^https?://(www\.)?", "", regex=True).to_numpy()
    out = np.zeros((sites.size, n_classes))
    for train, test in StratifiedKFold(5, shuffle=True, random_state=seed).split(hosts, targets):
        model = make_pipeline(TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5),
                                              sublinear_tf=True, min_df=2),
                              LogisticRegression(C=4.0, max_iter=2000))
        model.fit(hosts[train], targets[train])
        out[np.ix_(test, model.classes_)] = model.predict_proba(hosts[test])
    out = np.maximum(out, 1e-6)
    return out / out.sum(axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=1)
    args = parser.parse_args()
    folder = data_dir()
    table = pd.read_csv(folder / "adultcontent2_labels.csv")
    gold = pd.read_csv(folder / "adultcontent2_gold.csv").set_index("task")["truth"]
    labels = pl.data.Labels.from_frame(table, item="task", annotator="worker", label="label")
    classes = list(labels.classes)
    votes = np.zeros((labels.n_items, labels.n_classes))
    np.add.at(votes, (labels.item, labels.label), 1)
    majority = votes.argmax(axis=1)
    scored = np.flatnonzero(pd.Index(labels.items).isin(gold.index))
    truth = pd.Index(classes).get_indexer(gold.loc[labels.items[scored]].to_numpy())
    rows = []
    for seed in range(args.seeds):
        start = time.perf_counter()
        P = out_of_fold_probabilities(labels.items, majority, labels.n_classes, seed)
        trained = time.perf_counter() - start
        rows.append({"seed": seed, "method": "classifier", "seconds": trained,
                     **scores(P[scored].argmax(1), P[scored].max(1), 1 - P[scored].max(1),
                              truth)})
        share = votes / votes.sum(axis=1, keepdims=True)
        rows.append({"seed": seed, "method": "majority",
                     **scores(share[scored].argmax(1), share[scored].max(1),
                              1 - share[scored].max(1), truth)})
        for name, predictions in (("plausible+classifier", P), ("plausible", None)):
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = pl.aggregate(labels, seed=seed, predictions=predictions)
            seconds = time.perf_counter() - start
            p = result.plausibility.transpose("item", "class").sel(
                item=labels.items[scored], **{"class": classes}).values
            rows.append({"seed": seed, "method": name, "seconds": seconds,
                         **scores(p.argmax(1), p.max(1), 1 - p.max(1), truth)})
        from cleanlab.multiannotator import get_label_quality_multiannotator

        wide = table.assign(code=pd.Index(classes).get_indexer(table["label"])).pivot_table(
            index="task", columns="worker", values="code", aggfunc="first")
        wide = wide.reindex(labels.items)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quality = get_label_quality_multiannotator(wide, P, verbose=False)["label_quality"]
        seconds = time.perf_counter() - start
        q = quality["consensus_quality_score"].to_numpy()[scored]
        rows.append({"seed": seed, "method": "crowdlab", "seconds": seconds,
                     **scores(quality["consensus_label"].to_numpy()[scored], q, -q, truth)})
        print(pd.DataFrame(rows[-5:]).to_string(index=False), flush=True)
    print("\nmean over seeds:")
    print(pd.DataFrame(rows).drop(columns="seed").groupby("method", sort=False)
          .mean(numeric_only=True).to_string(float_format="%.4f"))


if __name__ == "__main__":
    main()
