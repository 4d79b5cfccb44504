"""The ambiguity model's two ways of drawing the intended classes, ``sampler="urn"`` against
``sampler="single-site"``, measured in the same run on Snow et al.'s RTE, TEMP and WSD, the
dentistry data and the simulated crowd of :mod:`plausible.data.crowd_simulation` (30 % of
its items ambiguous).

Per data set and sampler: ``pl.sample(ambiguity.build(labels, sampler=...), draws=1000,
chains=4, seed=1)`` after a short warm-up run that compiles, timed; then the convergence
report's worst R-hat and smallest bulk ESS of each variable (``concentration``,
``base_measure``, ``confusion``, ``plausibility``), and the ratio urn / single-site of the
worst variable's bulk ESS per second. Also the forward pass's products per label
(:func:`plausible.maths.dirichlet_mixture.pass_cost`), which the default choice reads
(:data:`plausible.models.ambiguity.sampler.URN_COST`).

    PLAUSIBLE_DATA=../shared/data .venv/bin/python benchmarks/bench_ambiguity_sampler.py
        [--draws 1000] [--crowd-labels 3000]

**Result** (2026-11-27, two cores, 4 x 1000 draws; worst bulk ESS per second, urn /
single-site): RTE 24x (``kappa``: bulk ESS 706 against 11, R-hat 1.003 against 1.285),
TEMP 3.2x, dentistry 1.7x, WSD 0.39x, the simulated crowd 0.42x. The urn converged at 4 x
1000 on RTE, TEMP, WSD and the crowd, single-site on WSD only (on the crowd its ``kappa``
stayed at R-hat 1.03; the model page reports ``draws="auto"`` converging there single-site at
4 x 4,000 draws in 55 s, where the urn took 62 s for 4 x 1,000 here).
Products per label: 11, 11, 6, 66, 176.
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

import plausible as pl
from plausible.data.crowd_simulation import simulate_crowd
from plausible.maths.dirichlet_mixture import pass_cost
from plausible.models import ambiguity

SAMPLERS = ("urn", "single-site")


def run(labels, sampler, draws):
    """The convergence table of one timed run and its sampling seconds."""
    pl.sample(ambiguity.build(labels, sampler=sampler), draws=20, tune=10, chains=1, seed=0,
              progressbar=False, check_convergence=False)  # compile
    start = time.perf_counter()
    trace = pl.sample(ambiguity.build(labels, sampler=sampler), draws=draws, chains=4, seed=1,
                      progressbar=False, check_convergence=False)
    seconds = time.perf_counter() - start
    return pl.diagnostics.convergence_report(trace).table, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--crowd-labels", type=int, default=3000)
    args = parser.parse_args()
    home = os.environ.get("PLAUSIBLE_DATA")
    if not home:
        sys.exit("bench_ambiguity_sampler: set PLAUSIBLE_DATA (the public data sets)")
    data = {task.upper(): pl.data.load_snow2008(task, home).annotations
            for task in ("rte", "temp", "wsd")}
    data["dentistry"] = pl.data.load_caries(home)
    data["crowd"] = simulate_crowd(args.crowd_labels, 0, ambiguous=0.3).labels
    warnings.simplefilter("ignore")
    print(f"{'data':10s} {'per label':>9s} {'sampler':12s} {'seconds':>8s} "
          f"{'worst R-hat':>11s} {'min bulk ESS':>12s} {'worst var':>14s} {'ESS/s':>7s}")
    for title, labels in data.items():
        per_label = pass_cost(np.bincount(labels.item), labels.n_classes) / labels.item.size
        rate = {}
        for sampler in SAMPLERS:
            table, seconds = run(labels, sampler, args.draws)
            worst = table["min_ess_bulk"].idxmin()
            rate[sampler] = table["min_ess_bulk"].min() / seconds
            print(f"{title:10s} {per_label:9.0f} {sampler:12s} {seconds:8.1f} "
                  f"{table['max_rhat'].max():11.3f} {table['min_ess_bulk'].min():12.0f} "
                  f"{worst:>14s} {rate[sampler]:7.1f}")
        print(f"{'':10s} urn / single-site: {rate['urn'] / rate['single-site']:.2f}x")


if __name__ == "__main__":
    main()
