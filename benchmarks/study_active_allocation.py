"""Allocation study: random, uncertainty sampling and expected-information-gain allocation
replayed on two real annotation pools (:mod:`plausible.active.study`), over seeds.

* CIFAR-10H: per seed 1000 images drawn at random, each with its ~51 real votes as the pool;
  ``dirichlet`` model; start with one vote per image, batches of 100 votes.
* RTE (Snow et al. 2008): 800 items, each with its 10 real labels by known workers as the
  pool; ``dawid-skene``; start with one label per item, batches of 100 (item, worker) labels;
  gold labels available.

Every strategy gets the same starting annotations per seed (the replay's seed). Items are
never settled during the replay (``threshold=None``), so every round spends its whole batch
and the curves compare accuracy at equal spending. Prints per strategy and round the mean and
standard error over seeds of ``agreement`` (top class = the full-pool posterior's) and, on
RTE, ``accuracy`` against gold, then the annotations each strategy needs to reach the level
random allocation reaches at the end, and the share of random's extra annotations saved.

    PLAUSIBLE_DATA=../shared/data .venv/bin/python benchmarks/study_active_allocation.py \
        [--seeds 10] [--out results/active_allocation.csv]

About 20 minutes on 2 cores at the defaults (measured with other work running).
"""

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

import plausible as pl
from plausible.active import study

STRATEGIES = ("random", "uncertainty", "information")


def cifar10h(seed, votes, args):
    rng = np.random.default_rng(10_000 + seed)
    chosen = np.sort(rng.choice(votes.counts.shape[0], args.cifar_items, replace=False))
    subset = pl.data.Votes(votes.counts[chosen], votes.items[chosen], votes.classes)
    full = pl.aggregate(subset, "dirichlet", draws=500, chains=2, seed=seed)
    reference = full.labels()["top_class"]
    return [study.replay(subset, "dirichlet", s, reference=reference, batch=args.batch,
                         rounds=args.cifar_rounds, threshold=None, seed=seed).assign(strategy=s)
            for s in STRATEGIES]


def rte(seed, snow, reference, args):
    return [study.replay(snow.annotations, "dawid-skene", s, reference=reference, gold=snow.gold,
                         batch=args.batch, rounds=args.rte_rounds, threshold=None,
                         seed=seed).assign(strategy=s)
            for s in STRATEGIES]


def report(curves: pd.DataFrame, name: str, metrics) -> None:
    print(f"\n== {name}: mean (standard error) over {curves['seed'].nunique()} seeds ==")
    grouped = curves.groupby(["strategy", "round"])
    for metric in metrics:
        mean = grouped[metric].mean().unstack("strategy")[list(STRATEGIES)]
        se = grouped[metric].sem().unstack("strategy")[list(STRATEGIES)]
        spent = grouped["annotations"].mean().unstack("strategy")["random"]
        table = mean.round(4).astype(str) + " (" + se.round(4).astype(str) + ")"
        table.insert(0, "annotations", spent.astype(int))
        print(f"\n{metric}:\n{table.to_string()}")
        level = mean["random"].iloc[-1]
        print(f"\nannotations to reach random allocation's final {metric} {level:.4f}:")
        print(study.savings(curves, metric, level).round(3).to_string())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--cifar-items", type=int, default=1000)
    parser.add_argument("--cifar-rounds", type=int, default=20)
    parser.add_argument("--rte-rounds", type=int, default=16)
    parser.add_argument("--out", default="results/active_allocation.csv")
    args = parser.parse_args()

    votes = pl.data.load_cifar10h()
    snow = pl.data.load_snow2008("rte")
    full = pl.aggregate(snow.annotations, "dawid-skene", draws=1000, chains=4, seed=0)
    reference = full.labels()["top_class"]
    gold_full = (reference == snow.gold.reindex(reference.index)).mean()
    print(f"RTE: the full-pool dawid-skene posterior's labels agree with gold on "
          f"{gold_full:.4f} of the items")
    parts = []
    for seed in range(args.seeds):
        for frame in cifar10h(seed, votes, args):
            parts.append(frame.assign(data="cifar10h", seed=seed))
        for frame in rte(seed, snow, reference, args):
            parts.append(frame.assign(data="rte", seed=seed))
        print(f"seed {seed} done", flush=True)
    curves = pd.concat(parts, ignore_index=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    curves.to_csv(out, index=False)
    report(curves[curves["data"] == "cifar10h"], "CIFAR-10H (dirichlet)", ["agreement"])
    report(curves[curves["data"] == "rte"], "RTE (dawid-skene)", ["agreement", "accuracy"])
    print(f"\ncurves written to {out}")


if __name__ == "__main__":
    main()
