"""Whether two checkouts draw bit-identical posteriors for every registered model at a fixed
seed: the check that a change of shape (files moved, packages split) changed no draw.

Each checkout runs in a child process of its own with ``PYTHONPATH`` at it. The child
simulates one small crowd per annotation format from a fixed numpy seed (through the data
containers' public constructors, so both trees read the same annotations), fits every model
its registry lists with ``plausible.aggregate(data, name, draws=60, chains=2, seed=0)``, and
saves every posterior variable and the plausibility, with the exact bytes, to one ``.npz`` per
model. The parent then compares the two folders array by array: same names, same shapes, same
bits (``numpy.array_equal`` with NaNs equal). A model only one tree registers is listed, not
compared.

Run: ``git worktree add /tmp/base <commit>`` then
``python benchmarks/draws_identity.py --baseline /tmp/base`` (about 3 minutes per checkout on
2 cores). ``--keep DIR`` keeps the saved draws; ``--models a,b`` compares some models only.
Exits 1 when any draw differs.
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CHILD = r'''
import sys, warnings
from pathlib import Path
import numpy as np, pandas as pd
warnings.simplefilter("ignore")
import plausible as pl
from plausible import models
from plausible.data import Comparisons, Labels, LabelSets, Rankings, Ratings, Votes

out, wanted = Path(sys.argv[1]), [n for n in sys.argv[2].split(",") if n]
rng = np.random.default_rng(20261207)
n_items, n_ann, n_classes = 40, 6, 3
truth = rng.integers(0, n_classes, n_items)

def labels_frame(n_classes):
    item = np.repeat(np.arange(n_items), 4)
    annotator = np.concatenate([rng.choice(n_ann, 4, replace=False) for _ in range(n_items)])
    right = rng.random(item.size) < 0.75
    label = np.where(right, truth[item] % n_classes, rng.integers(0, n_classes, item.size))
    return pd.DataFrame({"item": item, "annotator": annotator, "label": label})

votes = Votes.from_counts(rng.multinomial(5, [0.6, 0.3, 0.1], n_items)[:, rng.permutation(3)])
rankings = Rankings.from_selectors(
    [[[[int(c)] for c in rng.permutation(4)[:2]] for _ in range(3)] for _ in range(n_items)],
    classes=4)
ratings = Ratings.from_frame(pd.DataFrame({
    "item": np.repeat(np.arange(n_items), 3), "annotator": np.tile(np.arange(3), n_items),
    "score": np.clip(np.repeat(rng.normal(1.5, 0.8, n_items), 3)
                     + rng.normal(0, 0.4, 3 * n_items), 0.0, 3.0).round(1)}))
sets = labels_frame(n_classes)
sets["label"] = np.array(["a", "b", "c"])[sets["label"]]
pairs = rng.integers(0, 8, (120, 2)); pairs = pairs[pairs[:, 0] != pairs[:, 1]]
winner = np.where(rng.random(len(pairs)) < 0.7, pairs.min(1), pairs.max(1))
DATA = {
    "votes": votes, "rankings": rankings, "ratings": ratings,
    "labels": Labels.from_frame(labels_frame(n_classes)),
    "labels (binary)": Labels.from_frame(labels_frame(2)),
    "label_sets": LabelSets.from_frame(sets),
    "comparisons": Comparisons.from_frame(pd.DataFrame({
        "worker": rng.integers(0, 5, len(pairs)), "left": pairs[:, 0], "right": pairs[:, 1],
        "label": winner})),
}
OPTIONS = {"normal-inverse-gamma": {"threshold": 1.5},
           "censored-normal-inverse-gamma": {"threshold": 1.5, "scale": (0.0, 3.0)}}
for name in models.available().index:
    if wanted and name not in wanted:
        continue
    entry = models.entry(name)
    key = "labels (binary)" if entry.classes == "binary" else entry.data
    result = pl.aggregate(DATA[key], name, draws=60, chains=2, seed=0, **OPTIONS.get(name, {}))
    arrays = {f"posterior/{v}": np.asarray(result.trace["posterior"][v].values)
              for v in result.trace["posterior"].data_vars}
    arrays["plausibility"] = np.asarray(result.plausibility.values)
    np.savez(out / f"{name}.npz", **arrays)
    print(name, flush=True)
'''


def draw(checkout: Path, out: Path, models: str) -> None:
    """Fit every model of ``checkout`` in a child process and save its draws under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(checkout.resolve()))
    subprocess.run([sys.executable, "-c", CHILD, str(out), models], env=env, check=True,
                   cwd=tempfile.gettempdir())


def compare(old: Path, new: Path) -> list[str]:
    """The differences between two folders of saved draws, one line each."""
    problems = []
    names_old = {p.stem for p in old.glob("*.npz")}
    names_new = {p.stem for p in new.glob("*.npz")}
    for name in sorted(names_old ^ names_new):
        print(f"{name}: only in {'baseline' if name in names_old else 'this checkout'}")
    for name in sorted(names_old & names_new):
        a, b = np.load(old / f"{name}.npz"), np.load(new / f"{name}.npz")
        if set(a.files) != set(b.files):
            problems.append(f"{name}: variables differ: {sorted(set(a.files) ^ set(b.files))}")
            continue
        differ = [k for k in a.files
                  if a[k].shape != b[k].shape or a[k].dtype != b[k].dtype
                  or not np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind in "fc")]
        print(f"{name}: {len(a.files)} arrays, "
              f"{'identical' if not differ else 'DIFFERENT: ' + ', '.join(differ)}")
        problems += [f"{name}: {k} differs" for k in differ]
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the other checkout")
    parser.add_argument("--keep", type=Path, help="keep the saved draws in this folder")
    parser.add_argument("--models", default="", help="comma-separated model names (all)")
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        draw(args.baseline, root / "baseline", args.models)
        draw(here, root / "checkout", args.models)
        problems = compare(root / "baseline", root / "checkout")
    print("all draws bit-identical" if not problems else f"{len(problems)} arrays differ")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
