"""Label aggregation against gold on a panel of real crowds: the command line at its defaults
beside majority vote, EM Dawid-Skene, crowd-kit and plausible's label models.

Panel (each a long table ``task,worker,label`` and a gold table ``task,truth``, every id and
label read as a string): every ``<name>_labels.csv`` + ``<name>_gold.csv`` pair under
``$PLAUSIBLE_DATA/crowds`` and under each ``--extra`` folder; Snow et al.'s (2008) ``rte``,
``temp`` and ``wsd``; ``cifar10h-thin``, CIFAR-10H with ``k ~ uniform{1..5}`` of each image's
votes drawn without replacement (``--seed``), the worker being the anonymous vote slot
``0..k-1``. Gold rows repeated exactly count once; a task with two different truths, or
absent from the labels, is not scored (the set's notes say how many).

Rows per set, each run in a fresh ``spawn`` child process:

* ``majority vote (vote shares)``: the accuracy of majority vote with ties split evenly
  between the tied classes (its expected accuracy); Brier score and ECE of the raw vote
  shares;
* ``EM Dawid-Skene``: :func:`em_dawid_skene` (Dawid & Skene 1979, plain EM, here);
* ``crowd-kit DawidSkene``, ``GLAD``, ``MACE``, ``Wawa`` at their defaults,
  ``fit_predict_proba`` (in crowd-kit 1.4.2 with scikit-learn >= 1.6, ``Wawa`` raises in
  ``check_is_fitted`` and is left out with that reason);
* ``plausible <model>``: ``pl.aggregate(labels, model, seed=seed, max_seconds=...)`` for every
  label model (``--models``; ``annotator-beta`` on two classes only), with whether its
  convergence report passed; a model that raises is left out with its reason in the notes;
* ``default (CLI)``: ``plausible aggregate labels.csv -o out.csv --no-progress``, nothing
  else, as a new user runs it; scored on its ``plausibility_<class>`` columns, its chosen
  model and convergence verdict read from its printed summary;
* ``--ordinal (CLI)``, on the graded sets only (:data:`GRADED`: web and relevance): the same
  command with ``--ordinal`` (ordered probit), and every row's mean absolute grade error.

Scores against gold (:func:`plausible.diagnostics.proper_scores` for Brier and ECE): accuracy
of the most probable class, exact ties split evenly (expected accuracy); Brier
``sum_c (p_ic - 1[c = y_i])^2`` averaged over the gold items; ECE of the top label, 10 bins.
Time and memory: ``seconds`` is the wall time of the method's call in its child, after the
child has imported the method's library (numpy and pandas for majority vote and EM); for the
CLI row it is the whole command, interpreter start and imports included, which is what a
user waits. ``peak MB`` (2^20 bytes) is the child's peak resident set,
interpreter and imports included: ``VmHWM`` of its ``/proc/self/status``, not its
``ru_maxrss``, which Linux keeps across ``exec`` (a spawned child's would start at this
benchmark's resident size); plausible samples its chains in threads, and the only
subprocesses it starts are compiler probes. For the CLI row, the command's own ``ru_maxrss``
(``RUSAGE_CHILDREN`` of a child that ran nothing else; it starts at that small child's
resident size, far below the command's). Each ``default (CLI)`` row
is then held to five criteria: accuracy >= max(EM Dawid-Skene, majority vote) -
max(0.005, 1/gold items); Brier <= min(EM Dawid-Skene, vote shares) + 0.01; convergence
report passed; wall time <= 30 s; peak <= 1.5 GB (1536 MB). The ``--ordinal`` row of a graded
set is held to: accuracy >= EM Dawid-Skene - 0.005; grade error <= EM's; convergence report
passed; and, on sets of at most 20,000 labels, 60 s and 1.5 GB.

    PLAUSIBLE_DATA=../shared/data .venv/bin/python benchmarks/crowd_panel.py \\
        [--sets rte temp ...] [--extra DIR ...] [--skip-models | --models glad ...] \\
        [--max-seconds 120] [--seed 0] [--out panel.md]

**Result** (2026-12-07, seed 0, two cores, crowd-kit 1.4.2, scikit-learn 1.9.1; the whole
panel, 18 sets, ``--skip-models``; the table is in the docs' crowd panel page). The CLI default
(``learned-prior-dawid-skene``) passes 75 of the 90 criteria: accuracy on 16 of 18 sets (not
web, 0.766 against EM's 0.826; not zencrowd, 0.795 against majority vote's 0.832), Brier on 13
(not AdultContent2, dog, face, web, zencrowd), convergence on 16 (not CIFAR-10H thinned, not
relevance), memory on all 18 (at most 1,510 MB), 30 s on 12 (the largest sets and the small
five-class weather crowd take 31-39 s). crowd-kit's ``Wawa`` fails on every set (see above).
"""

import argparse
import importlib
import multiprocessing
import re
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

# plausible and crowd-kit are imported where used, so that a child process running majority
# vote or EM holds only numpy and pandas beside the interpreter.

SNOW_TASKS = ("rte", "temp", "wsd")
CROWDKIT = ("DawidSkene", "GLAD", "MACE", "Wawa")
EM_TOL, EM_ITER, EM_FLOOR = 1e-6, 500, 1e-9
CLI_ROW, EM_ROW, MV_ROW = "default (CLI)", "EM Dawid-Skene", "majority vote (vote shares)"
ORDINAL_ROW = "--ordinal (CLI)"
MAX_SECONDS_CLI, MAX_MB_CLI = 30.0, 1536.0
GRADED = {"web": "relevance grades 1-5 (Zhou et al. 2012)",
          "relevance": "TREC 2010 relevance grades 0-2, and 3 for a broken link"}
"""The panel's graded sets (their labels are grades in the order of their numbers): each also
gets the ``--ordinal`` command line row and every row its mean absolute grade error."""
ORDINAL_SECONDS, ORDINAL_LABELS = 60.0, 20_000
"""The ``--ordinal`` row's time bound, held on sets of at most ``ORDINAL_LABELS`` labels."""


@dataclass
class Crowd:
    """One panel set: ``labels`` (task, worker, label as strings), ``gold`` (truth indexed by
    task, the scored tasks only) and notes on what was left out."""

    name: str
    labels: pd.DataFrame
    gold: pd.Series
    notes: list = field(default_factory=list)


def crowd(name: str, labels: pd.DataFrame, gold: pd.DataFrame) -> Crowd:
    """A :class:`Crowd` from a labels table and a ``task,truth`` table: exact duplicate gold
    rows dropped, tasks with conflicting truths or without labels left out of scoring."""
    labels = labels[["task", "worker", "label"]].astype(str).reset_index(drop=True)
    gold = gold[["task", "truth"]].astype(str).drop_duplicates()
    notes = []
    conflicting = gold["task"].duplicated(keep=False)
    if conflicting.any():
        notes.append(f"{gold.loc[conflicting, 'task'].nunique()} gold task(s) with two different "
                     "truths left out of scoring")
        gold = gold[~conflicting]
    labelled = gold["task"].isin(labels["task"])
    if not labelled.all():
        notes.append(f"{int((~labelled).sum())} gold task(s) without labels not scored")
    return Crowd(name, labels, gold[labelled].set_index("task")["truth"], notes)


def csv_pairs(folder: Path) -> dict:
    """Loaders of every ``<name>_labels.csv`` + ``<name>_gold.csv`` pair in ``folder``."""
    return {path.name.removesuffix("_labels.csv"): partial(load_pair, path)
            for path in sorted(folder.glob("*_labels.csv"))
            if path.with_name(path.name.replace("_labels.csv", "_gold.csv")).is_file()}


def load_pair(labels_path: Path) -> Crowd:
    """The :class:`Crowd` of a ``<name>_labels.csv`` file and its ``<name>_gold.csv``."""
    read = partial(pd.read_csv, dtype=str, keep_default_na=False)
    name = labels_path.name.removesuffix("_labels.csv")
    return crowd(name, read(labels_path), read(labels_path.with_name(f"{name}_gold.csv")))


def load_snow(task: str) -> Crowd:
    """Snow et al. 2008's ``task`` (rte, temp or wsd) and its gold."""
    import plausible as pl

    data = pl.data.load_snow2008(task)
    labels = data.annotations.to_frame().rename(columns={"item": "task", "annotator": "worker"})
    gold = data.gold.rename_axis("task").rename("truth").reset_index()
    return crowd(task, labels, gold)


def load_cifar10h_thin(folder: Path, seed: int) -> Crowd:
    """CIFAR-10H thinned: per image ``k ~ uniform{1..5}`` of its votes without replacement,
    the worker being the vote's slot ``0..k-1``; gold the CIFAR-10 test labels."""
    from plausible.data.datasets import CIFAR10_CLASSES

    counts = np.load(folder / "cifar10h-counts.npy")
    truth = np.load(folder / "cifar10_test_labels.npy")
    n, n_classes = counts.shape
    rng = np.random.default_rng(seed)
    k = rng.integers(1, 6, size=n)
    totals = counts.sum(axis=1)
    image = np.repeat(np.arange(n), totals)
    vote = np.repeat(np.tile(np.arange(n_classes), n), counts.ravel())
    vote = vote[np.lexsort((rng.random(vote.size), image))]  # each image's votes shuffled
    slot = np.arange(vote.size) - np.repeat(np.cumsum(totals) - totals, totals)
    keep = slot < np.repeat(k, totals)
    classes = np.array(CIFAR10_CLASSES)
    labels = pd.DataFrame({"task": image[keep], "worker": slot[keep],
                           "label": classes[vote[keep]]})
    gold = pd.DataFrame({"task": np.arange(n), "truth": classes[truth]})
    return crowd("cifar10h-thin", labels, gold)


def panel(data: Path, extras: list, seed: int) -> dict:
    """Loaders of every panel set by name, in the panel's order."""
    loaders = csv_pairs(data / "crowds")
    loaders.update({task: partial(load_snow, task) for task in SNOW_TASKS})
    loaders["cifar10h-thin"] = partial(load_cifar10h_thin, data / "cifar10h", seed)
    for folder in extras:
        found = csv_pairs(Path(folder))
        clash = sorted(set(found) & set(loaders))
        if clash:
            raise SystemExit(f"--extra {folder}: set(s) {clash} already in the panel")
        loaders.update(found)
    return loaders


def encoded(labels: pd.DataFrame):
    """Integer codes of ``labels``: ``(item, worker, label)`` per label, the item ids and the
    sorted class names."""
    item, items = pd.factorize(labels["task"])
    worker, _ = pd.factorize(labels["worker"])
    label, classes = pd.factorize(labels["label"], sort=True)
    return item, worker, label, items, classes


def shares_of(item, label, n_items: int, n_classes: int) -> np.ndarray:
    """Per item the share of its labels in each class, ``(item, class)``."""
    counts = np.bincount(item * n_classes + label, minlength=n_items * n_classes)
    counts = counts.reshape(n_items, n_classes).astype(np.float64)
    return counts / counts.sum(axis=1, keepdims=True)


def vote_shares(labels: pd.DataFrame) -> dict:
    """Majority vote's raw vote shares, ``{"p": (item, class) frame}``."""
    item, _, label, items, classes = encoded(labels)
    return {"p": pd.DataFrame(shares_of(item, label, len(items), len(classes)), index=items,
                              columns=classes)}


def em_dawid_skene(labels: pd.DataFrame) -> dict:
    """Dawid & Skene (1979) by EM from the vote shares: M-step class prior and per-worker
    confusion counts weighted by the posteriors (floored at 1e-9 only against log 0), E-step
    posteriors; until no posterior moves by 1e-6, at most 500 iterations. ``{"p", "note"}``."""
    item, worker, label, items, classes = encoded(labels)
    n_items, n_workers, k = len(items), worker.max() + 1, len(classes)
    posterior = shares_of(item, label, n_items, k)
    flat = (worker[:, None] * k + np.arange(k)) * k + label[:, None]  # [worker, truth, label]
    row = item[:, None] * k + np.arange(k)
    for iteration in range(1, EM_ITER + 1):
        prior = posterior.sum(axis=0) + EM_FLOOR
        confusion = np.bincount(flat.ravel(), weights=posterior[item].ravel(),
                                minlength=n_workers * k * k).reshape(n_workers, k, k)
        confusion += EM_FLOOR
        log_confusion = np.log(confusion / confusion.sum(axis=2, keepdims=True))
        log_p = np.bincount(row.ravel(), weights=log_confusion.reshape(-1)[flat].ravel(),
                            minlength=n_items * k).reshape(n_items, k)
        log_p += np.log(prior / prior.sum())
        updated = np.exp(log_p - log_p.max(axis=1, keepdims=True))
        updated /= updated.sum(axis=1, keepdims=True)
        change = np.abs(updated - posterior).max()
        posterior = updated
        if change < EM_TOL:
            break
    return {"p": pd.DataFrame(posterior, index=items, columns=classes),
            "note": f"{iteration} iterations, last change {change:.1e}"}


def crowdkit_method(labels: pd.DataFrame, method: str) -> dict:
    """crowd-kit's ``method`` at its defaults: ``{"p": fit_predict_proba(labels)}``."""
    import crowdkit.aggregation as ck

    return {"p": getattr(ck, method)().fit_predict_proba(labels)}


def plausible_model(labels: pd.DataFrame, model: str, seed: int, max_seconds: float) -> dict:
    """``pl.aggregate(labels, model, seed=seed, max_seconds=max_seconds)``: its posterior mean
    plausibilities and whether its convergence report passed."""
    import plausible as pl

    fit = pl.aggregate(labels, model, seed=seed, max_seconds=max_seconds)
    return {"p": fit.plausibility.transpose("item", "class").to_pandas(),
            "converged": fit.convergence().converged}


def cli_command() -> list:
    """The ``plausible`` command of this interpreter's environment."""
    script = Path(sys.executable).with_name("plausible")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "plausible.cli"]


def cli_default(labels: pd.DataFrame, *flags: str) -> dict:
    """``plausible aggregate labels.csv -o out.csv --no-progress [flags]`` in a subprocess: its
    plausibilities, convergence verdict and chosen model from its summary, its wall time and
    its peak resident set: ``ru_maxrss`` of ``RUSAGE_CHILDREN``, so call it from a process with
    no other child and a resident size below the command's (the command's own starts there)."""
    with tempfile.TemporaryDirectory() as folder:
        path, out = Path(folder) / "labels.csv", Path(folder) / "out.csv"
        labels.to_csv(path, index=False)
        start = time.perf_counter()
        run = subprocess.run([*cli_command(), "aggregate", str(path), "-o", str(out),
                              "--no-progress", *flags], check=False, capture_output=True,
                             text=True)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if run.returncode:
            tail = (run.stderr or run.stdout).strip().splitlines() or ["no output"]
            raise RuntimeError(f"exit code {run.returncode}: {tail[-1]}")
        table = pd.read_csv(out, dtype={"item": str}).set_index("item")
    columns = [c for c in table.columns if c.startswith("plausibility_")]
    lines = run.stdout.splitlines()
    chosen = re.search(r"; (.*?); \d+ chains x", lines[0])
    return {"p": table[columns].rename(columns=lambda c: c.removeprefix("plausibility_")),
            "converged": any(line.startswith(("Converged", "Exact independent"))
                             for line in lines),
            "note": chosen.group(1) if chosen else lines[0], "seconds": seconds,
            "peak_mb": peak}


def own_peak_mb() -> float:
    """This process's peak resident set in MB, ``VmHWM`` of ``/proc/self/status``: the high-water
    mark of its own memory map, which starts afresh at ``exec``. (Linux keeps ``ru_maxrss``
    across ``exec``: a spawned child's would start at its parent's resident size.)"""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def child(function, args: tuple, imports: tuple, send) -> None:
    """In the spawned child: import ``imports``, run ``function(*args)`` and send its result
    with ``seconds`` (wall time of the call) and ``peak_mb`` (:func:`own_peak_mb`) unless it
    measured them itself; or ``{"error": reason}``, the exception's first line, shortened."""
    warnings.simplefilter("ignore")
    try:
        for module in imports:
            importlib.import_module(module)
        start = time.perf_counter()
        result = function(*args)
        result.setdefault("seconds", time.perf_counter() - start)
        result.setdefault("peak_mb", own_peak_mb())
    except Exception as error:  # noqa: BLE001 - any failure becomes the row's reason
        reason = (str(error).strip().splitlines() or [""])[0]
        result = {"error": textwrap.shorten(f"{type(error).__name__}: {reason}", 160,
                                            placeholder=" ...")}
    send.send(result)


def measured(function, args: tuple, imports: tuple = ()) -> dict:
    """``function(*args)`` run in a fresh spawned process (see :func:`child`)."""
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=child, args=(function, args, imports, send))
    process.start()
    send.close()
    try:
        result = receive.recv()
    except EOFError:
        result = None
    process.join()
    return result or {"error": f"the child process died (exit code {process.exitcode})"}


def scores(p: pd.DataFrame, gold: pd.Series, graded: bool = False) -> dict:
    """Accuracy (exact ties split evenly), Brier and ECE of ``p (item, class)`` on the gold
    items; a class missing from ``p`` has probability 0. ``graded``: also the mean absolute
    grade error of the most probable grade (the first of tied ones), grades read as
    numbers."""
    import plausible as pl

    classes = [*p.columns, *sorted(set(gold) - set(p.columns))]
    p = p.reindex(columns=classes, fill_value=0.0)
    proper = pl.diagnostics.proper_scores(p, gold)
    values = p.reindex(gold.index).to_numpy(dtype=np.float64)
    top = values == values.max(axis=1, keepdims=True)
    hit = top[np.arange(len(gold)), p.columns.get_indexer(gold.to_numpy())]
    out = {"accuracy": float((hit / top.sum(axis=1)).mean()), "brier": proper["brier"],
           "ece": proper["ece"]}
    if graded:
        grade = p.columns.to_numpy(dtype=float)[values.argmax(axis=1)]
        out["grade error"] = float(np.abs(grade - gold.to_numpy(dtype=float)).mean())
    return out


def methods(data: Crowd, args) -> list:
    """``(row name, function, args, imports)`` of every method run on ``data``."""
    labels, binary = data.labels, data.labels["label"].nunique() == 2
    rows = [(MV_ROW, vote_shares, (labels,), ()), (EM_ROW, em_dawid_skene, (labels,), ())]
    rows += [(f"crowd-kit {m}", crowdkit_method, (labels, m), ("crowdkit.aggregation",))
             for m in CROWDKIT]
    if not args.skip_models:
        rows += [(f"plausible {m}", plausible_model, (labels, m, args.seed, args.max_seconds),
                  ("plausible",)) for m in args.models if binary or m != "annotator-beta"]
    rows.append((CLI_ROW, cli_default, (labels,), ()))
    if data.name in GRADED:
        rows.append((ORDINAL_ROW, cli_default, (labels, "--ordinal"), ()))
    return rows


def run_set(data: Crowd, args) -> tuple[pd.DataFrame, list]:
    """Every method on ``data``: the table of scores, time and memory, and notes."""
    rows, notes = [], list(data.notes)
    if not args.skip_models and data.labels["label"].nunique() != 2 \
            and "annotator-beta" in args.models:
        notes.append("plausible annotator-beta: not run (two classes only)")
    for name, function, function_args, imports in methods(data, args):
        print(f"{data.name}: {name} ...", file=sys.stderr, flush=True)
        result = measured(function, function_args, imports)
        if "error" in result:
            notes.append(f"{name}: left out, {result['error']}")
            if name in (CLI_ROW, ORDINAL_ROW):
                rows.append({"method": name, "converged": False})
            continue
        rows.append({"method": name, **scores(result["p"], data.gold, data.name in GRADED),
                     "converged": result.get("converged"), "seconds": result["seconds"],
                     "peak MB": result["peak_mb"], "note": result.get("note", "")})
    return pd.DataFrame(rows).set_index("method"), notes


def criteria(table: pd.DataFrame, n_gold: int) -> pd.DataFrame:
    """The ``default (CLI)`` row against the five criteria: value, bound (as text) and pass."""
    cli = table.loc[CLI_ROW]
    accuracy = max(table.loc[EM_ROW, "accuracy"], table.loc[MV_ROW, "accuracy"])
    accuracy -= max(0.005, 1 / n_gold)
    brier = min(table.loc[EM_ROW, "brier"], table.loc[MV_ROW, "brier"]) + 0.01
    checks = [("accuracy >= max(EM, MV) - max(0.005, 1/gold items)", "accuracy", accuracy,
               "{:.4f}"),
              ("Brier <= min(EM, vote shares) + 0.01", "brier", brier, "{:.4f}"),
              ("wall seconds <= 30", "seconds", MAX_SECONDS_CLI, "{:.1f}"),
              ("peak MB <= 1536 (1.5 GB)", "peak MB", MAX_MB_CLI, "{:.0f}")]
    rows = [{"criterion": "convergence report passed", "value": cli["converged"],
             "bound": True, "pass": bool(cli["converged"])}]
    for name, column, bound, fmt in checks:
        value = cli.get(column, np.nan)
        above = column == "accuracy"
        rows.append({"criterion": name, "value": value if pd.isna(value) else fmt.format(value),
                     "bound": fmt.format(bound),
                     "pass": bool(pd.notna(value) and (value >= bound if above else
                                                       value <= bound))})
    return pd.DataFrame(rows)


def ordinal_criteria(table: pd.DataFrame, n_labels: int) -> pd.DataFrame:
    """The ``--ordinal`` row of a graded set against the ordinal criteria: accuracy >= EM -
    0.005, grade error <= EM's, converged, and on sets of at most :data:`ORDINAL_LABELS`
    labels 60 s and 1.5 GB."""
    row, em = table.loc[ORDINAL_ROW], table.loc[EM_ROW]
    checks = [("accuracy >= EM - 0.005", row.get("accuracy", np.nan),
               em["accuracy"] - 0.005, True, "{:.4f}"),
              ("grade error <= EM's", row.get("grade error", np.nan), em["grade error"],
               False, "{:.4f}")]
    if n_labels <= ORDINAL_LABELS:
        checks += [(f"wall seconds <= {ORDINAL_SECONDS:.0f}", row.get("seconds", np.nan),
                    ORDINAL_SECONDS, False, "{:.1f}"),
                   ("peak MB <= 1536 (1.5 GB)", row.get("peak MB", np.nan), MAX_MB_CLI, False,
                    "{:.0f}")]
    rows = [{"criterion": "convergence report passed", "value": row["converged"],
             "bound": True, "pass": bool(row["converged"])}]
    for name, value, bound, above, fmt in checks:
        rows.append({"criterion": name, "value": value if pd.isna(value) else fmt.format(value),
                     "bound": fmt.format(bound),
                     "pass": bool(pd.notna(value) and (value >= bound if above else
                                                       value <= bound))})
    return pd.DataFrame(rows)


def cell(value, fmt: str) -> str:
    """A table cell: booleans as yes/no, missing values blank, floats by ``fmt``."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return fmt.format(value) if isinstance(value, float) else str(value)


def markdown(frame: pd.DataFrame, formats: dict) -> str:
    """``frame`` (its index as the first column, if named) as a markdown table, floats formatted
    per column by ``formats`` (default 4 decimals)."""
    frame = frame.reset_index() if frame.index.name else frame
    fmts = [formats.get(column, "{:.4f}") for column in frame.columns]
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |",
             "|" + "|".join("---" for _ in frame.columns) + "|"]
    lines += ["| " + " | ".join(cell(v, f) for v, f in zip(row, fmts)) + " |"
              for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def report(data: Crowd, table: pd.DataFrame, notes: list, checks: pd.DataFrame,
           ordinal: pd.DataFrame | None = None) -> str:
    """The markdown section of one set: sizes, scores table, notes and criteria (and, for a
    graded set, the ``--ordinal`` row's)."""
    labels = data.labels
    sizes = (f"{len(labels)} labels, {labels['task'].nunique()} items, "
             f"{labels['worker'].nunique()} workers, {labels['label'].nunique()} classes, "
             f"{len(data.gold)} gold items scored")
    columns = ["accuracy", "brier", "ece", "converged", "seconds", "peak MB", "note"]
    if data.name in GRADED:
        columns.insert(1, "grade error")
        sizes += f"; {GRADED[data.name]}"
    shown = table.reindex(columns=columns).rename(columns={"brier": "Brier", "ece": "ECE"})
    parts = [f"## {data.name}", sizes,
             markdown(shown, {"seconds": "{:.2f}", "peak MB": "{:.0f}"})]
    if notes:
        parts.append("\n".join(f"- {note}" for note in notes))
    parts += [f"Criteria, {CLI_ROW}: {int(checks['pass'].sum())} of {len(checks)} pass",
              markdown(checks, {})]
    if ordinal is not None:
        passing = f"{int(ordinal['pass'].sum())} of {len(ordinal)} pass"
        parts += [f"Criteria, {ORDINAL_ROW}: {passing}", markdown(ordinal, {})]
    return "\n\n".join(parts) + "\n"


def main():
    """Parse the flags, run every chosen set and print (and with ``--out`` write) its report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", help="only these sets (default: the whole panel)")
    parser.add_argument("--extra", action="append", default=[], metavar="DIR",
                        help="also every <name>_labels.csv + <name>_gold.csv pair in DIR")
    parser.add_argument("--models", nargs="+", help="plausible label models (default: all)")
    parser.add_argument("--skip-models", action="store_true",
                        help="leave out the plausible per-model rows")
    parser.add_argument("--max-seconds", type=float, default=120.0,
                        help="max_seconds of each plausible model's pl.aggregate")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the CIFAR-10H thinning and of pl.aggregate")
    parser.add_argument("--out", help="also write the markdown to this file")
    args = parser.parse_args()
    import plausible as pl

    available = list(pl.models.available("labels").index)
    unknown = sorted(set(args.models or ()) - set(available))
    if unknown:
        parser.error(f"unknown label model(s) {unknown}; one of {available}")
    args.models = args.models or available
    loaders = panel(pl.data.datasets.data_home(), args.extra, args.seed)
    names = args.sets or list(loaders)
    if set(names) - set(loaders):
        parser.error(f"unknown set(s) {sorted(set(names) - set(loaders))}; one of {list(loaders)}")
    sections, passed, total, ordinal_passed, ordinal_total = [], 0, 0, 0, 0
    for name in names:
        data = loaders[name]()
        table, notes = run_set(data, args)
        checks = criteria(table, len(data.gold))
        passed, total = passed + int(checks["pass"].sum()), total + len(checks)
        ordinal = (ordinal_criteria(table, len(data.labels)) if name in GRADED
                   and ORDINAL_ROW in table.index else None)
        if ordinal is not None:
            ordinal_passed += int(ordinal["pass"].sum())
            ordinal_total += len(ordinal)
        sections.append(report(data, table, notes, checks, ordinal))
        print(sections[-1], flush=True)
        if args.out:
            Path(args.out).write_text("\n".join(sections))
    sections.append(f"**{CLI_ROW}: {passed} of {total} criteria pass over {len(names)} set(s)."
                    + (f" {ORDINAL_ROW}: {ordinal_passed} of {ordinal_total} on the graded "
                       "sets." if ordinal_total else "") + "**\n")
    print(sections[-1])
    if args.out:
        Path(args.out).write_text("\n".join(sections))


if __name__ == "__main__":
    main()
