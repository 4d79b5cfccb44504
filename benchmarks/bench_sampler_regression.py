"""Wall time of every compiled sampling path of ``plausible.sample`` in this checkout against a
baseline checkout (an earlier commit), measured in the same run on the same machine.

The paths: the Dawid-Skene family on a million simulated labels (full, MACE, hierarchical,
lazily computed plausibilities), the hierarchical and the fixed Dirichlet on CIFAR-10H,
Plackett-Luce and PrIRN on the dermatology rankings, easy/hard on the dentistry data, censored
ratings on 500 simulated slider items, the models sampled by their declared PyMC steps
(annotator-beta on the dentistry data, GLAD and Su on RTE), and the confusion Gibbs coverage study of
``plausible.evaluation`` (20 seeds). Each path runs once to compile, then its best of two runs
is kept (one for Plackett-Luce and the study); each checkout runs in a child process of its
own with ``PYTHONPATH`` at it. Needs ``PLAUSIBLE_DATA``. Prints both columns and the ratio.

Run: ``git worktree add /tmp/base <commit>`` then
``PLAUSIBLE_DATA=../shared/data python benchmarks/bench_sampler_regression.py --baseline /tmp/base``
(about 7 minutes per checkout on 2 cores).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r'''
import os, sys, time, warnings, json, numpy as np
warnings.simplefilter("ignore")
import plausible as pl
from plausible.models.ratings.nig import NIGPrior
out = {}
def timed(name, f, repeat=2):
    f()  # warm (compile caches)
    best = min((lambda t: (f(), time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(repeat))
    out[name] = best
data = os.environ["PLAUSIBLE_DATA"]
# Dawid-Skene, 1M labels (50k items x 20 labels, 500 annotators, 5 classes), 1 chain x 1000
rng = np.random.default_rng(0)
n_items, per, J, C = 50_000, 20, 500, 5
item = np.repeat(np.arange(n_items), per); ann = rng.integers(0, J, item.size)
truth = rng.integers(0, C, n_items); correct = rng.random(item.size) < 0.8
label = np.where(correct, truth[item], rng.integers(0, C, item.size))
labels = pl.data.Labels(item, ann, label, np.arange(n_items), np.arange(J), np.arange(C))
for name in ("dawid-skene", "mace", "hierarchical-dawid-skene"):
    m = pl.models.get(name)(labels)
    timed(f"{name} 1M labels 1x1000", lambda: pl.sample(m, draws=1000, chains=1, seed=0, log_likelihood=False, check_convergence=False))
m = pl.models.get("dawid-skene")(labels)
timed("dawid-skene 1M labels 2x500 lazy", lambda: pl.sample(m, draws=500, chains=2, seed=0, log_likelihood=False, check_convergence=False, memory_budget=2e8))
votes = pl.data.load_cifar10h(data)
m = pl.models.get("hierarchical-dirichlet")(votes)
timed("hierarchical-dirichlet cifar10h 4x1000", lambda: pl.sample(m, draws=1000, chains=4, seed=0, log_likelihood=False, check_convergence=False))
m = pl.models.get("dirichlet")(votes)
timed("dirichlet cifar10h 4x1000 (exact)", lambda: pl.sample(m, draws=1000, chains=4, seed=0, log_likelihood=False))
derm = pl.data.load_dermatology(data)
m = pl.models.get("plackett-luce")(derm.rankings)
timed("plackett-luce dermatology 4x1000", lambda: pl.sample(m, draws=1000, chains=4, seed=0, log_likelihood=False, check_convergence=False), repeat=1)
m = pl.models.get("prirn")(derm.rankings, reliability=20)
timed("prirn dermatology 4x1000 (exact)", lambda: pl.sample(m, draws=1000, chains=4, seed=0, log_likelihood=False))
if True:
    m = pl.models.get("easy-hard")(pl.data.load_caries(data))
    timed("easy-hard dentistry 4x2500", lambda: pl.sample(m, draws=2500, chains=4, seed=0, log_likelihood=False, check_convergence=False))
from plausible.data.ratings_simulators import simulate_nig
r = simulate_nig(NIGPrior(2.0, 1.0, 3.0, 8.0), n_items=500, ratings_per_item=10, seed=3).ratings
ratings = pl.data.Ratings(r.item, r.annotator, np.clip(np.round(r.score), 0.0, 10.0), r.items, r.annotators, scale=(0.0, 10.0))
m = pl.models.get("censored-normal-inverse-gamma")(ratings, threshold=5.0, resolution=1.0)
timed("censored-nig 500x10 4x1000", lambda: pl.sample(m, draws=1000, chains=4, seed=0, log_likelihood=False, check_convergence=False))
caries = pl.data.load_caries(data)
m = pl.models.get("annotator-beta")(caries)
timed("annotator-beta dentistry 4x1000", lambda: pl.sample(m, draws=1000, chains=4, seed=0, log_likelihood=False, check_convergence=False))
rte = pl.data.load_snow2008("rte", data).annotations
for name in ("glad", "su-difficulty"):
    m = pl.models.get(name)(rte)
    timed(f"{name} rte 4x1000", lambda: pl.sample(m, draws=1000, chains=4, seed=0, log_likelihood=False, check_convergence=False, progressbar=False))
try:
    from plausible.evaluation.studies import multiclass_coverage_study
except ImportError:
    from plausible.testing.studies import multiclass_coverage_study
timed("confusion gibbs study 20 seeds", lambda: multiclass_coverage_study(range(20), method="gibbs"), repeat=1)
json.dump(out, open(sys.argv[1], "w"))
'''


def run(checkout: Path) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "times.json"
        subprocess.run([sys.executable, "-c", CHILD, str(out)], check=True, cwd=checkout,
                       env={**os.environ, "PYTHONPATH": str(checkout)})
        return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="a checkout of the earlier commit")
    parser.add_argument("--repeat", type=int, default=1,
                        help="child processes per checkout, alternating; the median is shown "
                             "(timings on a shared machine can be bimodal)")
    args = parser.parse_args()
    if "PLAUSIBLE_DATA" not in os.environ:
        sys.exit("bench_sampler_regression: set PLAUSIBLE_DATA (the public data sets)")
    runs = {"before": [], "after": []}
    for _ in range(args.repeat):
        runs["before"].append(run(Path(args.baseline).resolve()))
        runs["after"].append(run(Path(__file__).resolve().parents[1]))
    before, after = ({name: statistics.median(r[name] for r in runs[key] if name in r)
                      for name in runs[key][0]} for key in ("before", "after"))
    print(f"{'path':45s} {'baseline s':>11s} {'this s':>8s} {'ratio':>6s}  "
          f"(median of {args.repeat})")
    for name, seconds in after.items():
        print(f"{name:45s} {before.get(name, float('nan')):11.2f} {seconds:8.2f} "
              f"{seconds / before.get(name, float('nan')):6.2f}")


if __name__ == "__main__":
    main()
