"""Benchmark: exact Gibbs (data augmentation + slice scan of the hyper-parameters, compiled
sweeps) vs NUTS on the marginalised hierarchical Beta annotator model, effective samples per
second of the prevalence, on the same data in the same run; then the dentistry summary numbers.

    PLAUSIBLE_DATA=../shared/data .venv/bin/python benchmarks/bench_annotator_beta.py [--draws 2000]

Data: the caries data (Espeland & Handelman 1989) when ``PLAUSIBLE_DATA`` is set, else a
simulated data set of the same design. Times are PyMC's ``sampling_time`` (tuning +
draws, compilation excluded) and wall time of :func:`plausible.sample` (compilation
included). ESS is the bulk ESS of ``prevalence``. Warm-up: ``--tune`` NUTS adaptation
iterations, ``--gibbs-tune`` burn-in iterations for the Gibbs sampler (it has nothing to
adapt); both are counted in the sampling time. Target: Gibbs >= 5x NUTS.
"""

import argparse
import os
import time

import arviz as az
import numpy as np
import pandas as pd

import plausible as pl
from plausible.data.labels import Labels
from plausible.diagnostics.annotation_predictive import annotation_predictive_check
from plausible.diagnostics import convergence_report, ess_bulk
from plausible.models import annotator_beta as ab


def simulated_dentistry(seed=0):
    rng = np.random.default_rng(seed)
    sens = np.array([0.68, 0.69, 0.70, 0.69, 0.68])
    spec = np.array([0.74, 0.76, 0.78, 0.80, 0.81])
    c = rng.random(3869) < 0.075
    x = np.where(c[:, None], rng.random((3869, 5)) < sens, rng.random((3869, 5)) > spec)
    item, annotator = np.divmod(np.arange(x.size), 5)
    return Labels.from_frame(pd.DataFrame({"item": item, "annotator": annotator,
                                           "label": x.ravel().astype(int)}), classes=[0, 1])


def timed(model, **kwargs):
    start = time.perf_counter()
    trace = pl.sample(model, progressbar=False, check_convergence=False, **kwargs)
    wall = time.perf_counter() - start
    return trace, wall, float(trace.sample_stats.attrs["sampling_time"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--tune", type=int, default=1000, help="NUTS adaptation iterations")
    parser.add_argument("--gibbs-tune", type=int, default=200, help="Gibbs burn-in iterations")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sweeps", type=int, default=10, help="Gibbs sweeps per iteration")
    parser.add_argument("--skip-nuts", action="store_true")
    args = parser.parse_args()
    if os.environ.get("PLAUSIBLE_DATA"):
        labels, source = pl.data.load_caries(), "caries"
    else:
        labels, source = simulated_dentistry(args.seed), "simulated dentistry design"
    print(f"data: {source}: {labels.n_items} items, {labels.n_annotators} annotators, "
          f"{labels.n_annotations} labels; {args.chains} chains x {args.draws} draws, "
          f"tune {args.tune} (NUTS) / {args.gibbs_tune} (Gibbs)")
    common = dict(draws=args.draws, chains=args.chains)
    runs = [("gibbs", True, args.sweeps, dict(tune=args.gibbs_tune)),
            ("gibbs_1_sweep", True, 1, dict(tune=args.gibbs_tune))]
    runs += [] if args.skip_nuts else [("nuts", False, 1, dict(tune=args.tune, target_accept=0.95))]
    rows, traces = {}, {}
    for name, gibbs, sweeps, kwargs in runs:
        trace, wall, sampling = timed(ab.build(labels, gibbs=gibbs, plausibility=False, sweeps=sweeps),
                                      seed=args.seed, **common, **kwargs)
        ess = float(ess_bulk(trace.posterior["prevalence"].values))
        rows[name] = {"wall_s": wall, "sampling_s": sampling, "ess_prevalence": ess,
                      "ess_per_s": ess / sampling, "ess_per_wall_s": ess / wall,
                      "divergences": int(trace.sample_stats["diverging"].sum())
                      if "diverging" in trace.sample_stats else 0}
        traces[name] = trace
    table = pd.DataFrame(rows).T
    print(table.round(2).to_string())
    if "nuts" in rows:
        ratio = rows["gibbs"]["ess_per_s"] / rows["nuts"]["ess_per_s"]
        print(f"Gibbs ({args.sweeps} sweeps) / NUTS effective samples per second (prevalence): {ratio:.2f} "
              f"(wall-time basis {rows['gibbs']['ess_per_wall_s'] / rows['nuts']['ess_per_wall_s']:.2f})")

    trace = traces["gibbs"]
    report = convergence_report(trace)
    print(f"\nGibbs trace: max R-hat {report.table['max_rhat'].max():.4f}, "
          f"min bulk ESS {report.table['min_ess_bulk'].min():.0f}, "
          f"min tail ESS {report.table['min_ess_tail'].min():.0f}; "
          f"label switching (share of mirrored draws per chain): {ab.label_switching_check(trace).values}")
    loo = az.loo(trace)
    print(f"PSIS-LOO (per patient): elpd {float(loo.elpd):.1f}, max Pareto k {float(np.max(loo.pareto_k)):.3f}")
    q = trace.posterior["prevalence"].values.ravel()
    print(f"prevalence: median {np.median(q):.4f}, 95 % interval {np.quantile(q, [0.025, 0.975]).round(4)}")
    sens, spec = ab.annotator_accuracies(trace.posterior)
    print(pd.DataFrame({
        "sensitivity": sens.median(("chain", "draw")).values,
        "sens_2.5%": sens.quantile(0.025, ("chain", "draw")).values,
        "sens_97.5%": sens.quantile(0.975, ("chain", "draw")).values,
        "specificity": spec.median(("chain", "draw")).values,
        "spec_2.5%": spec.quantile(0.025, ("chain", "draw")).values,
        "spec_97.5%": spec.quantile(0.975, ("chain", "draw")).values,
    }, index=pd.Index(labels.annotators, name="annotator")).round(3).to_string())
    check = annotation_predictive_check(labels, ab.replicate_labels(trace, labels, draws=1000, seed=1))
    patterns = check.summary("pattern")
    print(patterns.loc[["00000", "11111"]].round(3).to_string())
    print(f"patterns outside their 95 % PPC interval: {list(patterns.index[~patterns['inside']])}")


if __name__ == "__main__":
    main()
