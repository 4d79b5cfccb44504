"""Label accuracy of Bayesian GLAD and Su against crowd-kit's GLAD and Dawid-Skene EM in a
parametric bootstrap of Snow et al.'s RTE, same replicates, same run.

On RTE itself the aggregators differ on a handful of split-vote items, so one data set cannot
say whether one is more accurate. Each replicate keeps RTE's design (800 items, 164 workers,
who labelled what), takes the gold labels as the truth and crowd-kit GLAD's EM estimates of
the abilities and log inverse difficulties as the parameters (a point that favours EM, if
anything), draws new labels (:func:`plausible.data.simulate_glad_labels`) and scores every
aggregator's labels against the truth. Prints McNemar's exact test on RTE itself and the
paired differences in correct items over the replicates
(:mod:`plausible.diagnostics.label_accuracy`).

    PLAUSIBLE_DATA=../shared/data .venv/bin/python benchmarks/bench_glad_rte_accuracy.py \
        [--replicates 40] [--draws 500] [--task rte]

About 20 s a replicate at the defaults (2 chains x 500 draws after 500 warm-up per model).
"""

import argparse
import warnings

import numpy as np
import pandas as pd
from crowdkit.aggregation import GLAD, DawidSkene

import plausible as pl
from plausible.data import load_snow2008, simulate_glad_labels
from plausible.diagnostics import accuracy_study, paired_differences, paired_label_test
from plausible.models import glad, su_difficulty
from plausible.models.latent_class import majority_vote


def crowdkit(method):
    """An aggregator (``Labels -> class indices``) from a crowd-kit EM class."""
    def aggregate(labels):
        frame = labels.to_frame().rename(columns={"item": "task", "annotator": "worker"})
        proba = method(n_iter=100).fit_predict_proba(frame)
        return proba.reindex(labels.items)[list(labels.classes)].to_numpy().argmax(axis=1)
    return aggregate


def bayesian(module, draws, seed):
    """An aggregator: argmax of the posterior mean plausibility of ``module``'s model."""
    def aggregate(labels):
        trace = pl.sample(module.build(labels), draws=draws, tune=draws, chains=2, seed=seed,
                          progressbar=False, check_convergence=False)
        return trace.posterior["plausibility"].mean(("chain", "draw")).argmax("class").values
    return aggregate


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="rte", choices=["rte", "temp"])
    parser.add_argument("--replicates", type=int, default=40)
    parser.add_argument("--draws", type=int, default=500)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", module="pymc")
    data = load_snow2008(args.task)
    labels = data.annotations
    truth = np.searchsorted(labels.classes, data.gold.to_numpy())
    aggregators = {
        "majority vote": majority_vote,
        "crowd-kit GLAD": crowdkit(GLAD),
        "crowd-kit DS": crowdkit(DawidSkene),
        "Bayesian GLAD": bayesian(glad, args.draws, seed=3),
        "Bayesian Su": bayesian(su_difficulty, args.draws, seed=3),
    }

    print(f"{args.task.upper()}: {labels.n_items} items, {labels.n_annotators} workers, "
          f"{labels.n_annotations} labels; correct labels against gold and McNemar's exact test")
    correct = {name: aggregate(labels) == truth for name, aggregate in aggregators.items()}
    print(pd.Series({name: int(c.sum()) for name, c in correct.items()}).to_string())
    tests = {(ours, em): paired_label_test(correct[em], correct[ours])
             for ours in ("Bayesian GLAD", "Bayesian Su") for em in ("crowd-kit GLAD", "crowd-kit DS")}
    print(pd.DataFrame.from_dict(tests, orient="index").to_string())

    frame = labels.to_frame().rename(columns={"item": "task", "annotator": "worker"})
    em = GLAD(n_iter=100).fit(frame)
    ability = em.alphas_.reindex(labels.annotators).to_numpy()
    log_beta = em.betas_.reindex(labels.items).to_numpy()

    def simulate(seed):
        return simulate_glad_labels(labels, truth, ability, log_beta, seed=seed), truth

    study = accuracy_study(simulate, aggregators, range(args.replicates))
    print(f"\nparametric bootstrap at crowd-kit GLAD's estimates, {args.replicates} replicates: "
          f"mean correct items (sd)")
    print(pd.DataFrame({"mean": study.mean(), "sd": study.std()}).round(2).to_string())
    for baseline in ("crowd-kit GLAD", "crowd-kit DS"):
        print()
        print(paired_differences(study, baseline).round(4).to_string())


if __name__ == "__main__":
    main()
