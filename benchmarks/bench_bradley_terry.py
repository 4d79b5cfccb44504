"""Pairwise comparisons: plausible's Bradley–Terry and noisy Bradley–Terry against crowd-kit's
``BradleyTerry`` and ``NoisyBradleyTerry`` at their defaults, on simulated crowds with known
worths.

Items have true log-worths ``theta_i ~ N(0, 1)``. Each comparison shows a random pair of
distinct items to an annotator drawn with Zipf-like weights (long-tailed workloads: a few
annotators make hundreds of comparisons, most a handful), who picks ``l`` over ``r`` with
probability ``sigmoid(s_j (theta_l - theta_r))``: ``s_j = 1`` for most, ``s_j = 2`` for a
fifth (careful annotators, sharper than the model assumes), and in the ``spammers`` crowd
``s_j = 0`` (a fair coin) for another fifth; the ``clean`` crowd has no spammer, where the
noisy variant must lose nothing.

Per method: Spearman and Kendall correlation of the estimated worths with the true ones,
top-10 recovery (the share of the true ten best among the estimated ten best) and wall
seconds, averaged over seeds. plausible's estimate is the posterior mean log-worth
(``pl.sample`` at its defaults: 4 chains of 1000 draws; the rank table is summarised, not
stored); crowd-kit's ``BradleyTerry`` has no default iteration count and runs 100, as
``NoisyBradleyTerry`` does by default.

    .venv/bin/python benchmarks/bench_bradley_terry.py [--items 100 500] [--per-item 20]
        [--seeds 3]

``--cli N``: instead, the path a user takes at scale. The spammers crowd at ``N`` items (seed
0) is written to a CSV and read by ``plausible aggregate FILE -o out.csv`` at its defaults
(noisy Bradley–Terry, ``draws="auto"``, ``--max-seconds`` given by ``--max-seconds``), in a
child process whose wall time and peak resident memory are printed beside crowd-kit's
``NoisyBradleyTerry`` at its defaults on the same table, also in a child process; with the
Spearman correlation of each with the true worths. Past 2,000 items plausible keeps no
``n x n`` rank table: its rank summaries come from the worths' draws.

    .venv/bin/python benchmarks/bench_bradley_terry.py --cli 3000 --per-item 40
"""

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from crowdkit.aggregation import BradleyTerry, NoisyBradleyTerry
from scipy import stats

import plausible as pl
from plausible.data.comparisons import Comparisons
from plausible.models import bradley_terry

TOP = 10


def simulate(crowd: str, n_items: int, per_item: int, seed: int, n_annotators: int = 50):
    """``(comparisons, theta)`` for the crowd ``"spammers"`` or ``"clean"`` (module)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, n_items)
    n = n_items * per_item // 2  # each comparison shows two items
    left = rng.integers(n_items, size=n)
    right = (left + rng.integers(1, n_items, size=n)) % n_items
    weight = 1.0 / np.arange(1, n_annotators + 1) ** 0.8
    annotator = rng.choice(n_annotators, n, p=weight / weight.sum())
    kind = rng.permutation(n_annotators) * 5 // n_annotators  # five equal shares
    skill = np.where(kind == 0, 2.0, 1.0)
    if crowd == "spammers":
        skill = np.where(kind == 1, 0.0, skill)
    logit = skill[annotator] * (theta[left] - theta[right])
    picks = rng.random(n) < 1.0 / (1.0 + np.exp(-logit))
    items = np.array([f"item{i}" for i in range(n_items)])
    comparisons = Comparisons(left, right, annotator, picks, items,
                              np.array([f"worker{j}" for j in range(n_annotators)]))
    used = np.isin(np.arange(n_items), np.concatenate([left, right]))
    assert used.all(), "every item is compared"
    return comparisons, theta


def scores(estimate: pd.Series, comparisons: Comparisons, theta: np.ndarray) -> dict:
    """Rank agreement of ``estimate`` (indexed by item id) with the true ``theta``."""
    truth = pd.Series(theta, index=comparisons.items)
    estimate = estimate.reindex(truth.index)
    top_true = set(truth.nlargest(TOP).index)
    top_estimated = set(estimate.nlargest(TOP).index)
    return {"spearman": stats.spearmanr(estimate, truth)[0],
            "kendall": stats.kendalltau(estimate, truth)[0],
            f"top{TOP}": len(top_true & top_estimated) / TOP}


def plausible_fit(build, comparisons: Comparisons, seed: int):
    model = build(comparisons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = pl.sample(model, seed=seed, keep="summary", log_likelihood=False,
                          progressbar=False, check_convergence=False)
    report = pl.diagnostics.convergence_report(trace, var_names=["log_worth"])
    estimate = trace.posterior["log_worth"].mean(("chain", "draw")).to_series()
    return estimate, report.ok


CHILD = """
import resource, sys, time
import pandas as pd
start = time.perf_counter()
if sys.argv[1] == "plausible":
    from plausible.cli import main
    code = main(["aggregate", sys.argv[2], "-o", sys.argv[3], "--max-seconds", sys.argv[4],
                 "--no-progress", "--force"])
    assert code == 0
else:
    from crowdkit.aggregation import NoisyBradleyTerry
    NoisyBradleyTerry().fit_predict(pd.read_csv(sys.argv[2])).rename("score").to_csv(sys.argv[3])
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6)
"""
"""A child process: run plausible's command line or crowd-kit on the table, print its wall
seconds and peak resident GB (``ru_maxrss`` in kB on Linux)."""


def cli_scale(n_items: int, per_item: int, max_seconds: float) -> None:
    """``--cli`` (module docstring)."""
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    comparisons, theta = simulate("spammers", n_items, per_item, 0)
    truth = pd.Series(theta, index=comparisons.items)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        table = Path(folder) / "comparisons.csv"
        comparisons.to_frame().to_csv(table, index=False)
        for who in ("plausible", "crowd-kit"):
            out = Path(folder) / f"{who}.csv"
            result = subprocess.run([sys.executable, "-c", CHILD, who, str(table), str(out),
                                     str(max_seconds)], capture_output=True, text=True,
                                    check=True)
            seconds, peak = (float(v) for v in result.stdout.split()[-2:])
            frame = pd.read_csv(out, index_col=0)  # by item id
            estimate = -frame["expected_rank"] if who == "plausible" else frame["score"]
            rows.append({"method": who, "seconds": seconds, "peak_GB": peak,
                         "spearman": stats.spearmanr(estimate.reindex(truth.index), truth)[0]})
    frame = pd.DataFrame(rows).set_index("method")
    print(f"{n_items} items, {comparisons.n_comparisons} comparisons, spammers crowd "
          f"(plausible: --max-seconds {max_seconds:g})")
    print(frame.round(3).to_string())
    print(f"plausible / crowd-kit: {frame.loc['plausible', 'seconds'] / frame.loc['crowd-kit', 'seconds']:.1f}x "
          f"time, {frame.loc['plausible', 'peak_GB'] / frame.loc['crowd-kit', 'peak_GB']:.1f}x memory")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--per-item", type=int, default=20,
                        help="comparisons per item on average")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--cli", type=int, default=None, metavar="N",
                        help="the command line on N items instead (module docstring)")
    parser.add_argument("--max-seconds", type=float, default=60.0)
    args = parser.parse_args()
    if args.cli is not None:
        cli_scale(args.cli, args.per_item, args.max_seconds)
        return
    rows = []
    for n_items in args.items:
        for crowd in ("spammers", "clean"):
            for seed in range(args.seeds):
                comparisons, theta = simulate(crowd, n_items, args.per_item, seed)
                frame = comparisons.to_frame()
                methods = {
                    "plausible BT": lambda: plausible_fit(bradley_terry.build, comparisons, seed),
                    "plausible noisy BT": lambda: plausible_fit(bradley_terry.build_noisy,
                                                                comparisons, seed),
                    "crowd-kit BT": lambda: (BradleyTerry(n_iter=100).fit_predict(frame), None),
                    "crowd-kit NoisyBT": lambda: (NoisyBradleyTerry().fit_predict(frame), None),
                }
                for name, fit in methods.items():
                    start = time.perf_counter()
                    estimate, converged = fit()
                    seconds = time.perf_counter() - start
                    rows.append({"items": n_items, "crowd": crowd, "method": name, "seed": seed,
                                 "comparisons": comparisons.n_comparisons,
                                 **scores(estimate, comparisons, theta), "seconds": seconds,
                                 "converged": converged})
    table = pd.DataFrame(rows)
    summary = (table.groupby(["items", "crowd", "method"], sort=False)
               [["comparisons", "spearman", "kendall", f"top{TOP}", "seconds"]].mean())
    with pd.option_context("display.float_format", "{:.3f}".format, "display.width", 140,
                           "display.max_columns", 20):
        print(summary)
    plausible_runs = table[table["converged"].notna()]
    print(f"\nplausible runs with R-hat <= 1.01 and ESS >= 400 on every log-worth: "
          f"{int(plausible_runs['converged'].sum())} of {len(plausible_runs)}")


if __name__ == "__main__":
    main()
