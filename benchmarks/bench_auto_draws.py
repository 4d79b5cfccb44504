"""``draws="auto"`` against the fixed default (4 x 1000) for every label model on Snow et al.'s
RTE, TEMP and WSD tasks and the dentistry data, and ``pl.compare``'s cost against the sum of
its fits.

Per data set and model, ``pl.aggregate(labels, model, seed=s)`` at ``draws=1000`` and at
``draws="auto"`` for ``--seeds`` seeds (each in this process, after a warm-up fit that
compiles): how many seeds' fits pass the convergence report, the worst R-hat, the auto runs'
draws per chain (min-max) and their longest wall time. Data: RTE, TEMP, WSD, dentistry and
the crowd simulator of ``bench_label_mixing.py`` at 10,000 labels (and its classes read as two,
for annotator-beta). Then ``pl.compare(labels, models, seed=0)`` (``draws="auto"``) on the dentistry data,
timed whole, against the sum of the same five auto fits and their checks timed one by one.

    PLAUSIBLE_DATA=../shared/data .venv/bin/python benchmarks/bench_auto_draws.py [--seeds 5]
        [--models dawid-skene ...] [--no-compare]
"""

import argparse
import os
import sys
import time
import warnings

import plausible as pl

sys.path.insert(0, os.path.dirname(__file__))
from bench_label_mixing import binary, simulate_crowd  # noqa: E402

MODELS = ["dawid-skene", "hierarchical-dawid-skene", "one-coin", "mace", "glad"]


def fit(labels, model, draws, seed=0):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = pl.aggregate(labels, model, draws=draws, seed=seed)
    seconds = time.perf_counter() - start
    report = pl.diagnostics.convergence_report(result.trace)
    return result, seconds, report


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--models", nargs="+", default=MODELS + ["annotator-beta"])
    parser.add_argument("--no-compare", action="store_true", help="skip the pl.compare timing")
    args = parser.parse_args()
    home = os.environ.get("PLAUSIBLE_DATA")
    if not home:
        sys.exit("bench_auto_draws: set PLAUSIBLE_DATA (the public data sets)")
    data = {task.upper(): pl.data.load_snow2008(task, home).annotations
            for task in ("rte", "temp", "wsd")}
    data["dentistry"] = pl.data.load_caries(home)
    data["simulated 10k"] = simulate_crowd(10_000, seed=0)
    data["simulated 10k, binary"] = binary(data["simulated 10k"])
    fit(data["WSD"], "dawid-skene", 50)  # compile
    n = args.seeds
    print(f"{'data':14s} {'model':26s} | {'1000: pass':>10s} {'R-hat':>7s} | "
          f"{'auto: pass':>10s} {'R-hat':>7s} {'draws':>11s} {'max s':>6s}")
    for title, labels in data.items():
        for model in args.models:
            if model == "annotator-beta" and labels.n_classes != 2:
                continue
            if title.endswith("binary") and model != "annotator-beta":
                continue  # the binary crowd is there for annotator-beta
            fixed = [fit(labels, model, 1000, seed)[2] for seed in range(n)]
            autos = [fit(labels, model, "auto", seed) for seed in range(n)]
            draws = [a[0].trace.posterior.sizes["draw"] for a in autos]
            print(f"{title:14s} {model:26s} | {sum(r.converged for r in fixed):6d} / {n} "
                  f"{max(r.table['max_rhat'].max() for r in fixed):7.4f} | "
                  f"{sum(a[2].converged for a in autos):6d} / {n} "
                  f"{max(a[2].table['max_rhat'].max() for a in autos):7.4f} "
                  f"{min(draws):5d}-{max(draws):5d} {max(a[1] for a in autos):6.1f}", flush=True)
    if args.no_compare:
        return
    labels = data["dentistry"]
    models = MODELS + ["annotator-beta"]
    one_by_one = 0.0
    for model in models:
        start = time.perf_counter()
        result, _, _ = fit(labels, model, "auto")
        result.check(draws=200, seed=0)
        one_by_one += time.perf_counter() - start
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = pl.compare(labels, models, seed=0)
    together = time.perf_counter() - start
    print(f"\npl.compare on dentistry ({len(models)} models): {together:.1f} s; the fits and "
          f"checks one by one: {one_by_one:.1f} s; ratio {together / one_by_one:.2f}")
    print(comparison)


if __name__ == "__main__":
    main()
