"""PyMC's own ``pm.sample`` on a plausible model, with and without the model's steps.

A PyMC user builds a registered model and calls ``pm.sample``. Without steps PyMC assigns NUTS
to the continuous variables and ``CategoricalGibbsMetropolis`` to the latent classes; with
``pl.inference.steps(model)`` it runs the model's exact kernel. Both are timed in the same run
on the same data (GLAD-simulated labels, 60 items x 5 annotators, 3 classes, as a user's small
table), beside ``pl.sample`` (the same kernel in plausible's driver), each in a fresh process so
that compilation is counted as a user meets it. Printed: wall seconds, plausible's convergence
report (R-hat <= 1.01, bulk and tail ESS >= 100 per chain on every variable, the
plausibilities included) and the ratios.

Run: ``python benchmarks/bench_pymc_steps.py [--draws 1000] [--tune 1000] [--chains 2]
[--skip-default]`` (the default PyMC assignment takes minutes).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
start = time.perf_counter()
import pymc as pm
import plausible as pl
route, draws, tune, chains = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
labels = pl.data.simulate_glad(60, 5, n_classes=3, seed=1).labels
model = pl.models.get("dawid-skene")(labels)
if route == "pl.sample":
    trace = pl.sample(model, draws=draws, tune=tune, chains=chains, seed=0, progressbar=False,
                      check_convergence=False)
else:
    step = pl.inference.steps(model) if route == "pm.sample with steps" else None
    trace = pm.sample(model=model, step=step, draws=draws, tune=tune, chains=chains,
                      cores=chains, random_seed=0, progressbar=False,
                      compute_convergence_checks=False)
seconds = time.perf_counter() - start
report = pl.diagnostics.convergence_report(trace)
print(json.dumps({"seconds": seconds, "converged": bool(report.ok), "report": report.text}))
"""

ROUTES = ("pm.sample with steps", "pl.sample", "pm.sample default")


def run(route: str, draws: int, tune: int, chains: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, route, str(draws), str(tune), str(chains)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--skip-default", action="store_true",
                        help="leave out PyMC's own assignment (NUTS + CategoricalGibbsMetropolis)")
    args = parser.parse_args()
    results = {}
    for route in ROUTES:
        if route == "pm.sample default" and args.skip_default:
            continue
        results[route] = run(route, args.draws, args.tune, args.chains)
        r = results[route]
        print(f"{route:22s} {r['seconds']:8.1f} s  converged: {r['converged']}")
        print("    " + r["report"].replace("\n", "\n    "))
    steps = results["pm.sample with steps"]["seconds"]
    for route, r in results.items():
        print(f"{route:22s} {r['seconds'] / steps:6.2f} x the time of pm.sample with steps")


if __name__ == "__main__":
    main()
