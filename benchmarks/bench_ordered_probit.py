"""Benchmark: ordered probit's compiled sweep against the plainest numba loop doing the same
work, and the command line at its defaults on a graded crowd, in one run.

Per sweep, on the same state, each part of the sweep against its floor:

* the annotator moves (one round of slice updates of every annotator's bias, log noise and
  logit random-answer rate given the grades, and along the noise / random-answer lines; no
  grid move): plausible reads each annotator's labels through
  their counts by (label, grade), at most ``K^2`` terms; the floor sums ``log P(x | z, b, s,
  e)`` over every label of the annotator at each evaluation, one ``erfc`` pair per label;
* the label table and the grades (every item's grade posterior and a draw of it): plausible
  builds one ``(annotator * label, grade)`` table from the ``2 (K - 1)`` interval ends each
  annotator's cells share and sums rows of it per item; the floor evaluates the normal
  interval of every label under every grade.

Then the command line, ``plausible aggregate FILE --ordinal`` at its defaults, as a user runs
it (wall time and peak resident memory of the child process, its convergence line), beside
crowd-kit's EM Dawid–Skene on the same file. Targets (issue: ordinal models on real graded
crowds): the command line at most 60 s and 1.5 GB on a 15,000-label crowd on 2 cores,
converged; each compiled part no slower than its floor.

    .venv/bin/python benchmarks/bench_ordered_probit.py [--labels FILE.csv] [--sweeps 200]

``FILE.csv`` has columns ``task, worker, label`` (grades that sort as numbers); without it a
simulated crowd of 15,000 labels (3,000 items, 5 grades, 150 long-tailed annotators, a tenth
answering at random) is written to a temporary file.
"""

import argparse
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
import pandas as pd
from crowdkit.aggregation import DawidSkene

from plausible.data.labels import Labels
from plausible.models.dawid_skene import kernel as kernel_code
from plausible.models.ordered_probit.sampler import DIRECTIONS, WIDTHS, OrderedProbitKernel
from plausible.inference.step_methods.univariate_slice import slice_update

SQRT_HALF = math.sqrt(0.5)


@numba.njit
def plain_log_label(x, location, noise, spam, n_grades):
    """``log(e / K + (1 - e) (Phi(b) - Phi(a)))`` with ``Phi`` from ``erfc``, nothing more."""
    upper = 1.0 if x == n_grades - 1 else 0.5 * math.erfc(-(x + 0.5 - location) / noise
                                                          * SQRT_HALF)
    lower = 0.0 if x == 0 else 0.5 * math.erfc(-(x - 0.5 - location) / noise * SQRT_HALF)
    return math.log(spam / n_grades + (1.0 - spam) * (upper - lower))


@numba.njit
def plain_density(value, kind, j, offsets, item, label, z, bias, log_noise, logit, prior,
                  n_grades):
    """Annotator ``j``'s conditional in coordinate ``kind``, summed over its labels."""
    b, log_s, t = bias[j], log_noise[j], logit[j]
    if kind == 0:
        b, term = value, -0.5 * value * value / prior[0] ** 2
    elif kind == 1:
        log_s, term = value, -2.0 * prior[1] * value - prior[2] * math.exp(-2.0 * value)
    else:
        t = value
        term = -prior[3] * math.log1p(math.exp(-t)) - prior[4] * math.log1p(math.exp(t))
    spam, noise = 1.0 / (1.0 + math.exp(-t)), math.exp(log_s)
    total = 0.0
    for k in range(offsets[j], offsets[j + 1]):
        total += plain_log_label(label[k], z[item[k]] + b, noise, spam, n_grades)
    return total + term


_plain_update = slice_update(plain_density)


@numba.njit
def plain_line_density(t, j, base, direction, offsets, item, label, z, prior, n_grades):
    """Annotator ``j``'s joint conditional at ``base + t direction``, summed over its labels."""
    b, log_s, logit = base[0] + t * direction[0], base[1] + t * direction[1], \
        base[2] + t * direction[2]
    spam, noise = 1.0 / (1.0 + math.exp(-logit)), math.exp(log_s)
    total = (-0.5 * b * b / prior[0] ** 2 - 2.0 * prior[1] * log_s
             - prior[2] * math.exp(-2.0 * log_s) - prior[3] * math.log1p(math.exp(-logit))
             - prior[4] * math.log1p(math.exp(logit)))
    for k in range(offsets[j], offsets[j + 1]):
        total += plain_log_label(label[k], z[item[k]] + b, noise, spam, n_grades)
    return total


_plain_line_update = slice_update(plain_line_density)


@numba.njit
def plain_moves(rng, offsets, item, label, z, bias, log_noise, logit, prior, widths,
                directions, n_grades):
    """The floor of the annotator moves: the same slice updates, each evaluation a loop over
    the annotator's labels."""
    coordinates = (bias, log_noise, logit)
    base = np.empty(3)
    for j in range(bias.size):
        for kind in range(3):
            values = coordinates[kind]
            args = (kind, j, offsets, item, label, z, bias, log_noise, logit, prior, n_grades)
            values[j], _, _ = _plain_update(rng, values[j], plain_density(values[j], *args),
                                            -np.inf, np.inf, widths[kind], 0, args)
        for d in range(directions.shape[0]):
            base[0], base[1], base[2] = bias[j], log_noise[j], logit[j]
            args = (j, base, directions[d], offsets, item, label, z, prior, n_grades)
            t, _, _ = _plain_line_update(rng, 0.0, plain_line_density(0.0, *args), -np.inf,
                                         np.inf, 1.0, 0, args)
            bias[j], log_noise[j], logit[j] = (base[0] + t * directions[d, 0],
                                               base[1] + t * directions[d, 1],
                                               base[2] + t * directions[d, 2])


@numba.njit
def plain_grades(rng, offsets, annotator, label, bias, noise, spam, log_pi, z, out):
    """The floor of the grade step: every label's probability under every grade, then each
    item's posterior and a draw from it."""
    n_grades = log_pi.size
    row = np.empty(n_grades)
    for i in range(offsets.size - 1):
        for c in range(n_grades):
            row[c] = log_pi[c]
            for k in range(offsets[i], offsets[i + 1]):
                j = annotator[k]
                row[c] += plain_log_label(label[k], c + bias[j], noise[j], spam[j], n_grades)
        top = row.max()
        total = 0.0
        for c in range(n_grades):
            out[i, c] = math.exp(row[c] - top)
            total += out[i, c]
        u, cumulative = rng.random() * total, 0.0
        z[i] = n_grades - 1
        for c in range(n_grades):
            out[i, c] /= total
            cumulative += out[i, c] * total
            if u < cumulative:
                z[i] = c
                break


def simulated_crowd(path, seed=0, n_items=3000, n_grades=5, n_annotators=150, per_item=5):
    """A long-tailed graded crowd written to ``path`` (module)."""
    rng = np.random.default_rng(seed)
    weight = 1.0 / np.arange(1, n_annotators + 1) ** 0.8
    annotator = np.concatenate([rng.choice(n_annotators, per_item, replace=False,
                                           p=weight / weight.sum()) for _ in range(n_items)])
    item = np.repeat(np.arange(n_items), per_item)
    truth = rng.integers(n_grades, size=n_items)
    y = (truth[item] + rng.normal(0, 0.3, n_annotators)[annotator]
         + rng.uniform(0.3, 1.0, n_annotators)[annotator] * rng.standard_normal(item.size))
    label = np.clip(np.floor(y + 0.5), 0, n_grades - 1).astype(int)
    spammer = rng.random(n_annotators) < 0.1
    label = np.where(spammer[annotator], rng.integers(n_grades, size=item.size), label)
    pd.DataFrame({"task": item, "worker": annotator, "label": label}).to_csv(path, index=False)


def per_sweep(function, sweeps):
    function()  # compiled and warm
    start = time.perf_counter()
    for _ in range(sweeps):
        function()
    return (time.perf_counter() - start) / sweeps


def compiled_against_floor(labels, sweeps):
    kernel = OrderedProbitKernel(labels, bias_scale=0.5, noise_shape=3.0, noise_rate=0.5,
                                 spam_prior=(1.0, 4.0), gamma=1.0)
    rng = np.random.default_rng(0)
    state = kernel.start(rng)
    for _ in range(50):  # a state near the posterior
        state = kernel.sweep(rng, state, None)
    z, bias, log_noise, logit = state
    counts, _ = kernel.counts(z)
    none = np.zeros(labels.n_annotators, dtype=bool)
    order = np.argsort(labels.annotator, kind="stable")
    by_annotator = np.r_[0, np.cumsum(np.bincount(labels.annotator,
                                                  minlength=labels.n_annotators))]
    item, label = labels.item[order], labels.label[order].astype(np.int64)
    design = kernel.design
    log_pi = np.log(np.full(labels.n_classes, 1.0 / labels.n_classes))
    noise, spam = np.exp(log_noise), 1.0 / (1.0 + np.exp(-logit))
    out = np.empty((labels.n_items, labels.n_classes))

    def ours_moves():
        kernel.annotator_moves(rng, counts, bias, log_noise, logit, moves=1, grid=none)

    def floor_moves():
        plain_moves(rng, by_annotator, item, label, z, bias.copy(), log_noise.copy(),
                    logit.copy(), kernel.prior, WIDTHS, DIRECTIONS, labels.n_classes)

    def ours_grades():
        table = kernel.table(bias, log_noise, logit)
        kernel_code.class_sweep(design.offsets, design.code, table, log_pi, 1.0,
                                rng.random(design.n_items), z.copy(), design.fixed,
                                counts.copy(), np.bincount(z, minlength=labels.n_classes),
                                out, 0, design.n_items)

    def floor_grades():
        plain_grades(rng, design.offsets, design.annotator, design.label, bias, noise, spam,
                     log_pi, z.copy(), out)

    rows = []
    for part, ours, floor in (("annotator moves", ours_moves, floor_moves),
                              ("label table + grades", ours_grades, floor_grades)):
        mine, plain = per_sweep(ours, sweeps), per_sweep(floor, sweeps)
        rows.append({"part": part, "plausible ms": 1e3 * mine, "floor ms": 1e3 * plain,
                     "plausible / floor": mine / plain})
    start = time.perf_counter()
    for _ in range(sweeps):
        state = kernel.sweep(rng, state, None)
    rows.append({"part": "whole sweep",
                 "plausible ms": 1e3 * (time.perf_counter() - start) / sweeps})
    return pd.DataFrame(rows)


def command_line(path):
    """``plausible aggregate FILE --ordinal`` at its defaults in a child process: wall time,
    peak resident memory, its convergence line and the grades it names."""
    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "grades.csv")
        start = time.perf_counter()
        script = Path(sys.executable).with_name("plausible")
        run = subprocess.run([str(script), "aggregate", path, "--ordinal", "-o", out,
                              "--no-progress"], capture_output=True, text=True, check=True)
        wall = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the only child
        converged = next(line for line in run.stdout.splitlines()
                         if line.startswith(("Converged", "Not converged")))
        grades = pd.read_csv(out)
    return wall, peak / 1024, converged, grades


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", help="a graded crowd: CSV with task, worker, label")
    parser.add_argument("--sweeps", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = args.labels
        if path is None:
            path = os.path.join(directory, "simulated.csv")
            simulated_crowd(path)
        frame = pd.read_csv(path, dtype=str)
        labels = Labels.from_frame(frame, classes=sorted(frame["label"].unique(), key=float))
        print(f"{path}: {labels.n_annotations} labels, {labels.n_items} items, "
              f"{labels.n_annotators} annotators, {labels.n_classes} grades; numba "
              f"{numba.__version__}, {os.cpu_count()} CPUs")
        pd.set_option("display.width", 160)
        print(compiled_against_floor(labels, args.sweeps).round(3).to_string(index=False))
        start = time.perf_counter()
        DawidSkene(n_iter=100).fit_predict(frame)
        em = time.perf_counter() - start
        wall, peak, converged, _ = command_line(path)
        print(f"command line at its defaults: {wall:.1f} s, peak {peak:.0f} MB; {converged}")
        print(f"crowd-kit EM Dawid-Skene (in process): {em:.1f} s; command line / EM: "
              f"{wall / em:.0f}x")


if __name__ == "__main__":
    main()
