"""Bayesian Dawid–Skene (compiled exact Gibbs) against crowd-kit's EM Dawid–Skene, same data,
same run; and ten million labels in bounded memory.

Simulated crowd (``simulate``): ``C`` classes with prevalence ``Dirichlet(5)``; annotators
with accuracy ``Beta(4, 2)`` (mean 0.67), their errors spread over the other classes by a
``Dirichlet(1)`` per row, and 10 % of them spammers who answer uniformly at random; every item
labelled by ``--per-item`` distinct annotators drawn at random.

Part 1 (default 1,000,000 labels: 50,000 items x 20, 500 annotators, 5 classes):

* crowd-kit ``DawidSkene()`` at its defaults (``n_iter=100``, ``tol=1e-5``);
* ``plausible.sample(dawid_skene.build(labels))``: 4 chains x 1000 draws (+ the sampler's 100
  warm-up sweeps), plausibilities stored (float32), timed without the convergence report
  and the per-item log-likelihood, which are timed separately;
* the floor: the plainest exact Gibbs sampler of the same model, one numba loop per sweep
  (class log-likelihoods label by label into an array, softmax and inverse-CDF draw per
  item, counts rebuilt every sweep, Dirichlet draws), chains in threads as above.

Prints wall times, the ratios Bayesian / EM and Bayesian / floor, accuracies against the
simulated truth (posterior-mode labels; EM's labels), the Brier score of each method's label
probabilities, and the max R-hat of the plausibilities.

Part 2 (``--large-items``, default 500,000 items: 10,000,000 labels): 1 chain x 1000 draws in a
child process with ``memory_budget=--budget`` (default 3.5e9 bytes: the stored
plausibilities, 10 GB, do not fit, so they are computed from the stored parameters when
read); prints the sampling time, the child's peak resident memory (everything: simulation,
labels, trace) and the accuracy of the posterior-mode labels (their computation timed
apart).

    .venv/bin/python benchmarks/bench_dawid_skene.py [--items 50000] [--large-items 500000]
"""

import argparse
import json
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import pandas as pd

import plausible as pl
from plausible.data.labels import Labels
from plausible.diagnostics.convergence import convergence_report
from plausible.models import dawid_skene


def simulate(n_items: int, per_item: int, n_annotators: int, n_classes: int, seed: int):
    """``(labels, truth)``: the simulated crowd of the module docstring."""
    rng = np.random.default_rng(seed)
    C = n_classes
    prevalence = rng.dirichlet(np.full(C, 5.0))
    accuracy = rng.beta(4, 2, n_annotators)
    errors = rng.dirichlet(np.ones(C - 1), (n_annotators, C))  # row c over the classes != c
    theta = np.zeros((n_annotators, C, C))
    off = ~np.eye(C, dtype=bool)
    theta[:, off] = ((1 - accuracy)[:, None, None] * errors).reshape(n_annotators, -1)
    theta[:, np.arange(C), np.arange(C)] = accuracy[:, None]
    theta[rng.random(n_annotators) < 0.1] = 1.0 / C  # spammers
    truth = rng.choice(C, n_items, p=prevalence)
    annotator = np.empty((n_items, per_item), dtype=np.int64)
    for a in range(0, n_items, 20_000):  # per_item distinct annotators per item
        b = min(a + 20_000, n_items)
        annotator[a:b] = np.argpartition(rng.random((b - a, n_annotators)), per_item,
                                         axis=1)[:, :per_item]
    annotator = annotator.ravel()
    item = np.repeat(np.arange(n_items), per_item)
    label = np.empty_like(item)
    for a in range(0, item.size, 2_000_000):
        rows = theta[annotator[a:a + 2_000_000], truth[item[a:a + 2_000_000]]]
        u = rng.random((rows.shape[0], 1))
        label[a:a + 2_000_000] = np.minimum((u > np.cumsum(rows, axis=1)).sum(axis=1), C - 1)
    labels = Labels(item=item, annotator=annotator, label=label, items=np.arange(n_items),
                    annotators=np.arange(n_annotators), classes=np.arange(C))
    return labels, truth


@numba.njit(nogil=True)
def plain_gibbs(item, code, n_items, n_annotators, n_classes, beta, sweeps, tune, seed, mean):
    """The floor: the plainest exact Gibbs sampler of Dawid–Skene (module docstring); adds
    the kept sweeps' class posteriors, averaged, into ``mean (item, class)``."""
    np.random.seed(seed)
    C = n_classes
    z = np.zeros(n_items, dtype=np.int64)
    for k in range(item.size):  # start: each item's first label
        z[item[k]] = code[k] % C
    L = np.empty((n_items, C))
    for it in range(sweeps):
        counts = np.zeros((n_annotators * C, C))
        m = np.ones(C)
        for k in range(item.size):
            counts[code[k], z[item[k]]] += 1.0
        for i in range(n_items):
            m[z[i]] += 1.0
        table = np.empty((n_annotators * C, C))
        for j in range(n_annotators):
            for c in range(C):
                g = np.empty(C)
                for x in range(C):
                    g[x] = np.random.gamma(beta[c, x] + counts[j * C + x, c])
                for x in range(C):
                    table[j * C + x, c] = np.log(g[x] / g.sum())
        g = np.empty(C)
        for c in range(C):
            g[c] = np.random.gamma(m[c])
        log_pi = np.log(g / g.sum())
        L[:] = 0.0
        for k in range(item.size):
            for c in range(C):
                L[item[k], c] += table[code[k], c]
        for i in range(n_items):
            p = np.exp(log_pi + L[i] - (log_pi + L[i]).max())
            p /= p.sum()
            if it >= tune:
                mean[i] += p / (sweeps - tune)
            z[i] = min(np.searchsorted(np.cumsum(p), np.random.random(), side="right"), C - 1)


class Timer:
    def __enter__(self):
        self.wall = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.wall


def brier(probabilities: np.ndarray, truth: np.ndarray) -> float:
    """Mean over items of ``sum_c (p_c - [c = truth])^2``."""
    onehot = np.eye(probabilities.shape[1])[truth]
    return float(((probabilities - onehot) ** 2).sum(axis=1).mean())


def part_one(args):
    labels, truth = simulate(args.items, args.per_item, args.annotators, args.classes, args.seed)
    print(f"part 1: {labels.n_annotations:,} labels, {labels.n_items:,} items, "
          f"{labels.n_annotators} annotators, {labels.n_classes} classes")
    frame = pd.DataFrame({"task": labels.item, "worker": labels.annotator, "label": labels.label})
    from crowdkit.aggregation import DawidSkene

    with Timer() as em_time:
        em = DawidSkene()
        em_proba = em.fit_predict_proba(frame)
    em_proba = em_proba.reindex(index=labels.items, columns=labels.classes).fillna(0).to_numpy()

    model = dawid_skene.build(labels)
    pl.sample(model, draws=5, tune=1, chains=1, check_convergence=False,  # compile once
              log_likelihood=False)
    with Timer() as bayes_time:
        trace = pl.sample(model, draws=1000, chains=args.chains, seed=args.seed,
                          check_convergence=False, log_likelihood=False)
    with Timer() as mean_time:
        mean = pl.metrics.posterior_mean(trace).values
    with Timer() as report_time:
        report = convergence_report(trace, var_names=["plausibility", "class_prior"])
    with Timer() as loo_time:
        pl.inference.add_log_likelihood(trace, model)

    design_item = np.sort(labels.item)
    order = np.argsort(labels.item, kind="stable")
    code = (labels.annotator[order] * labels.n_classes + labels.label[order]).astype(np.int64)
    beta = dawid_skene.confusion_concentration(labels.n_classes, (4.0, 1.0))
    sweeps, tune = 1100, 100
    means = [np.zeros((labels.n_items, labels.n_classes)) for _ in range(args.chains)]
    plain_gibbs(design_item[:100], code[:100], 5, labels.n_annotators, labels.n_classes, beta,
                2, 1, 0, np.zeros((5, labels.n_classes)))  # compile
    with Timer() as floor_time, ThreadPoolExecutor(args.cores) as pool:
        list(pool.map(lambda c: plain_gibbs(design_item, code, labels.n_items, labels.n_annotators,
                                            labels.n_classes, beta, sweeps, tune, c, means[c]),
                      range(args.chains)))
    floor_mean = np.mean(means, axis=0)

    em_iterations = len(em.loss_history_)
    print(f"crowd-kit DawidSkene EM ({em_iterations} iterations): {em_time.wall:7.1f} s   "
          f"accuracy {(em_proba.argmax(1) == truth).mean():.4f}   Brier {brier(em_proba, truth):.5f}")
    print(f"plausible Bayesian DS ({args.chains} x 1000 draws, 100 warm-up): {bayes_time.wall:7.1f} s   "
          f"accuracy {(mean.argmax(1) == truth).mean():.4f}   Brier {brier(mean, truth):.5f}")
    print(f"floor: plain numba Gibbs (same draws):          {floor_time.wall:7.1f} s   "
          f"accuracy {(floor_mean.argmax(1) == truth).mean():.4f}")
    print(f"  per pass over the labels: EM {1e3 * em_time.wall / em_iterations:.0f} ms per "
          f"iteration, Bayesian {1e3 * bayes_time.wall * args.cores / (args.chains * 1100):.1f} "
          f"ms per sweep and core")
    print(f"  apart: posterior mean {mean_time.wall:.1f} s, convergence report "
          f"{report_time.wall:.1f} s, per-item log-likelihood {loo_time.wall:.1f} s")
    print(f"  max R-hat: plausibility {report.table.loc['plausibility', 'max_rhat']:.4f}, "
          f"class_prior {report.table.loc['class_prior', 'max_rhat']:.4f}; "
          f"min bulk ESS plausibility {report.table.loc['plausibility', 'min_ess_bulk']:.0f}")
    print(f"ratio Bayesian / EM: {bayes_time.wall / em_time.wall:.2f}   "
          f"Bayesian / floor: {bayes_time.wall / floor_time.wall:.2f}")


def peak_resident_bytes() -> int:
    """This process's peak resident memory (``VmHWM``: unlike ``ru_maxrss``, not inherited
    from the parent that started it)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def part_two(args):
    """Runs in the child: prints one JSON line."""
    labels, truth = simulate(args.large_items, args.per_item, args.annotators, args.classes,
                             args.seed)
    model = dawid_skene.build(labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the memory guard's notice: reported below
        pl.sample(model, draws=3, tune=1, chains=1, log_likelihood=False)  # compile
        with Timer() as sample_time:
            trace = pl.sample(model, draws=1000, chains=1, seed=args.seed,
                              memory_budget=args.budget, log_likelihood=False)
    with Timer() as mean_time:
        mean = pl.metrics.posterior_mean(trace).values
    print(json.dumps({
        "labels": int(labels.n_annotations), "items": int(labels.n_items),
        "seconds": sample_time.wall, "mean_seconds": mean_time.wall,
        "lazy": int(trace.posterior.attrs["computed_when_read"] == "plausibility"),
        "peak_gb": peak_resident_bytes() / 1e9,
        "accuracy": float((mean.argmax(1) == truth).mean())}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--large-items", type=int, default=500_000)
    parser.add_argument("--per-item", type=int, default=20)
    parser.add_argument("--annotators", type=int, default=500)
    parser.add_argument("--classes", type=int, default=5)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--cores", type=int, default=2, help="threads of the floor")
    parser.add_argument("--budget", type=float, default=3.5e9)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--part", choices=["all", "one", "two", "child"], default="all")
    args = parser.parse_args()
    if args.part == "child":
        part_two(args)
        return
    if args.part in ("all", "one"):
        part_one(args)
    if args.part in ("all", "two"):
        child = subprocess.run([sys.executable, __file__, "--part", "child",
                                *[f"--{k.replace('_', '-')}={v}" for k, v in vars(args).items()
                                  if k != "part"]], capture_output=True, text=True, check=True)
        result = json.loads(child.stdout.strip().splitlines()[-1])
        print(f"part 2: {result['labels']:,} labels, {result['items']:,} items, 1 chain x 1000 "
              f"draws: {result['seconds']:.1f} s (target < 120 s), peak memory "
              f"{result['peak_gb']:.2f} GB (target < 4 GB), plausibilities "
              f"{'computed when read' if result['lazy'] else 'stored'}; accuracy "
              f"{result['accuracy']:.4f} (posterior mean: {result['mean_seconds']:.1f} s)")


if __name__ == "__main__":
    main()
