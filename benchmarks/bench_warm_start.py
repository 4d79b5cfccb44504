"""Warm starts: after 1 % new labels, how many sweeps a refit needs, from an earlier run's
final classes (``pl.aggregate(..., init=earlier)``) against from the labels (a cold start),
and whether the two posteriors agree.

Data: a simulated crowd (``plausible.data.simulate_glad``: abilities and item difficulties
vary), ``--items`` items with ``--per-item`` labels each on average from ``--annotators``
workers, ``--classes`` classes; the earlier run sees 99 % of the labels (1 % held back at
random, some of them the only labels of their item, so new items appear too).

**Sweeps.** The refit at ``pl.aggregate``'s defaults (``draws="auto"``: blocks of 250, 500,
1000, ... draws per chain until every variable passes the convergence report), warm (from
the earlier run's final classes, 10 warm-up sweeps) and cold (from the labels, 100): the
sweeps each chain ran, over ``--repeats`` seeds. Target (issue): warm <= cold / 5.

**Agreement.** ``|mean_warm - mean_cold| / sqrt(mcse_warm^2 + mcse_cold^2)`` for
``class_prior`` and the plausibilities of the 50 items whose plausibility varies most, its
largest value (target <= 4.5).

    .venv/bin/python benchmarks/bench_warm_start.py [--model dawid-skene] [--items 5000]
"""

import argparse
import warnings

import numpy as np

import plausible as pl
from plausible.diagnostics import convergence_report, mcse_mean


def split(labels, share: float, seed: int):
    """``(earlier, all)`` label tables: ``earlier`` without a random ``share`` of the rows."""
    frame = labels.to_frame()
    held = np.random.default_rng(seed).random(len(frame)) < share
    return frame[~held], frame


def agreement(warm, cold, n_items: int = 50) -> float:
    """Largest ``|difference| / combined MCSE`` over ``class_prior`` and the plausibilities
    of the ``n_items`` items whose plausibility varies most."""
    worst = 0.0
    for name in ("class_prior", "plausibility"):
        a, b = warm.trace.posterior[name], cold.trace.posterior[name]
        if name == "plausibility":
            spread = b.std(("chain", "draw")).max("class")
            chosen = spread.argsort().values[-n_items:]
            a, b = a.isel(item=chosen), b.isel(item=chosen)
        a, b = (x.transpose("chain", "draw", ...).values for x in (a, b))
        mcse = np.hypot(mcse_mean(a), mcse_mean(b))
        z = np.abs(a.mean(axis=(0, 1)) - b.mean(axis=(0, 1))) / mcse
        worst = max(worst, float(np.nanmax(z[mcse > 0])))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="dawid-skene")
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--annotators", type=int, default=200)
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--per-item", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sim = pl.data.simulate_glad(args.items, args.annotators, n_classes=args.classes,
                                coverage=args.per_item / args.annotators, seed=args.seed)
    earlier, frame = split(sim.labels, 0.01, args.seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = pl.aggregate(earlier, args.model, seed=args.seed, keep="draws")
    new_items = len(set(frame["item"])) - len(set(earlier["item"]))
    print(f"{args.model}: {len(frame):,} labels, {args.items:,} items, {args.annotators} "
          f"annotators, {args.classes} classes; the refit adds {len(frame) - len(earlier)} "
          f"labels ({new_items} on new items)")
    sweeps = {"warm": [], "cold": []}
    for k in range(args.repeats):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs = {"warm": pl.aggregate(frame, args.model, seed=100 + k, init=first,
                                         keep="draws"),
                    "cold": pl.aggregate(frame, args.model, seed=200 + k, keep="draws")}
        line = []
        for name, run in runs.items():
            posterior = run.trace.posterior
            sweeps[name].append(posterior.attrs["tune"] + posterior.sizes["draw"])
            line.append(f"{name} {posterior.attrs['tune']} + {posterior.sizes['draw']} sweeps "
                        f"({posterior.attrs['sampling_seconds']:.1f} s, "
                        f"{'converged' if convergence_report(run.trace).converged else 'NOT converged'})")
        print(f"  refit {k}: {'; '.join(line)}; largest |warm - cold| / MCSE "
              f"{agreement(runs['warm'], runs['cold']):.2f} (target <= 4.5)")
    warm, cold = np.mean(sweeps["warm"]), np.mean(sweeps["cold"])
    print(f"sweeps per chain until the report passes (draws='auto'), mean of {args.repeats}: "
          f"warm {warm:.0f}, cold {cold:.0f}, ratio {warm / cold:.2f} (target <= 0.2)")


if __name__ == "__main__":
    main()
