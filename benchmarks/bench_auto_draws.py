"""``draws="auto"`` against the fixed default (4 x 1000) for every label model on Snow et al.'s
RTE, TEMP and WSD tasks and the dentistry data, and ``pl.compare``'s cost against the sum of
its fits.

Per data set and model, ``pl.aggregate(labels, model, seed=0)`` at ``draws=1000`` and at
``draws="auto"`` (each in this process, after a warm-up fit that compiles): wall time, draws
per chain, what stopped the auto run, and the convergence report's verdict with the worst
R-hat. Then ``pl.compare(labels, models, seed=0)`` (``draws="auto"``) on the dentistry data,
timed whole, against the sum of the same five auto fits and their checks timed one by one.

    PLAUSIBLE_DATA=../shared/data .venv/bin/python benchmarks/bench_auto_draws.py
"""

import os
import sys
import time
import warnings

import plausible as pl

MODELS = ["dawid-skene", "hierarchical-dawid-skene", "one-coin", "mace", "glad"]


def fit(labels, model, draws):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = pl.aggregate(labels, model, draws=draws, seed=0)
    seconds = time.perf_counter() - start
    report = pl.diagnostics.convergence_report(result.trace)
    return result, seconds, report


def main():
    home = os.environ.get("PLAUSIBLE_DATA")
    if not home:
        sys.exit("bench_auto_draws: set PLAUSIBLE_DATA (the public data sets)")
    data = {task.upper(): pl.data.load_snow2008(task, home).annotations
            for task in ("rte", "temp", "wsd")}
    data["dentistry"] = pl.data.load_caries(home)
    fit(data["WSD"], "dawid-skene", 50)  # compile
    print(f"{'data':10s} {'model':26s} | {'1000: s':>8s} {'verdict':>14s} {'R-hat':>7s} | "
          f"{'auto: s':>8s} {'draws':>6s} {'stopped by':>11s} {'verdict':>14s} {'R-hat':>7s}")
    for title, labels in data.items():
        models = MODELS + (["annotator-beta"] if labels.n_classes == 2 else [])
        for model in models:
            _, fixed_s, fixed = fit(labels, model, 1000)
            auto, auto_s, report = fit(labels, model, "auto")
            post = auto.trace.posterior
            print(f"{title:10s} {model:26s} | {fixed_s:8.1f} {fixed.status:>14s} "
                  f"{fixed.table['max_rhat'].max():7.4f} | {auto_s:8.1f} {post.sizes['draw']:6d} "
                  f"{post.attrs.get('draws_stopped_by', '-'):>11s} {report.status:>14s} "
                  f"{report.table['max_rhat'].max():7.4f}", flush=True)
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
