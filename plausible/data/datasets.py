"""Loaders of the public annotation data sets.

The project ships no data: each loader reads the files from a folder, ``data_home``
(argument, else the environment variable ``PLAUSIBLE_DATA``), laid out as

    cifar10h/cifar10h-counts.npy
    dermatology/dermatology_selectors.json, dermatology_conditions.txt, dermatology_risks.txt
    caries/caries.csv
    snow2008/<task>.standardized.tsv
    mimori2021/<dataset>/<dataset>.<variant>.txt.gz
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from plausible.data.validation import fmt, raise_first
from plausible.data.labels import Labels
from plausible.data.rankings import Rankings
from plausible.data.ratings import Ratings
from plausible.data.votes import Votes

ENV_VAR = "PLAUSIBLE_DATA"

CIFAR10_CLASSES = (
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
)
RISK_LEVELS = ("low", "medium", "high")
SNOW2008_LABEL_TASKS = {"rte": (0, 1), "temp": (1, 2), "wsd": (1, 2, 3)}
"""Categorical tasks of Snow et al. 2008 and their classes."""
SNOW2008_RATING_TASKS = {
    **dict.fromkeys(("anger", "disgust", "fear", "joy", "sadness", "surprise"), (0.0, 100.0)),
    "valence": (-100.0, 100.0),
}
"""Numeric affect tasks of Snow et al. 2008 and their rating scales."""
MIMORI2021_CLASSES = {"mixed_cifar10": CIFAR10_CLASSES, "mixed_mnist": tuple(range(10))}


def data_home(data_home: str | os.PathLike | None = None) -> Path:
    """The data folder: ``data_home`` if given, else ``$PLAUSIBLE_DATA``.

    Raises ``FileNotFoundError`` when neither is set or the folder does not exist.
    """
    if data_home is None:
        data_home = os.environ.get(ENV_VAR)
        if not data_home:
            raise FileNotFoundError(
                f"no data folder: pass data_home=... or set the environment variable {ENV_VAR} "
                "to the folder holding the public data sets"
            )
    path = Path(data_home).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(f"data folder {path} does not exist (from data_home or {ENV_VAR})")
    return path


_resolve = data_home  # the loaders' ``data_home`` argument shadows the function


def _file(home, dataset: str, *parts: str) -> Path:
    path = _resolve(home).joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"{dataset}: expected the file {path}")
    return path


def load_cifar10h(data_home=None) -> Votes:
    """CIFAR-10H human votes (Peterson et al. 2019): 10000 test images x 10 classes."""
    counts = np.load(_file(data_home, "CIFAR-10H", "cifar10h", "cifar10h-counts.npy"))
    return Votes(counts, np.arange(counts.shape[0]), np.array(CIFAR10_CLASSES))


@dataclass(frozen=True)
class Dermatology:
    """Differential diagnoses of skin conditions (Stutz et al. 2023).

    ``rankings``: 1947 cases x 419 conditions; ``risk`` int64 ``(class,)`` in
    ``0..2`` indexing ``risk_levels``.
    """

    rankings: Rankings
    risk: np.ndarray
    risk_levels: tuple[str, ...] = RISK_LEVELS

    def __post_init__(self):
        risk = np.asarray(self.risk, dtype=np.int64)
        if risk.shape != (self.rankings.n_classes,):
            raise ValueError(f"risk has shape {risk.shape}, expected ({self.rankings.n_classes},)")
        raise_first(
            (risk < 0) | (risk >= len(self.risk_levels)),
            lambda c: f"class {fmt(self.rankings.classes[c])}: risk level {risk[c]} "
            f"not in 0..{len(self.risk_levels) - 1}",
        )
        object.__setattr__(self, "risk", risk)


def load_dermatology(data_home=None) -> Dermatology:
    """Dermatology partial rankings with condition names and risk levels."""
    name = "dermatology"
    selectors = json.loads(_file(data_home, name, name, "dermatology_selectors.json").read_text())
    conditions = _file(data_home, name, name, "dermatology_conditions.txt").read_text().splitlines()
    risks = _file(data_home, name, name, "dermatology_risks.txt").read_text().split()
    rankings = Rankings.from_selectors(selectors, classes=np.array([c.strip() for c in conditions]))
    return Dermatology(rankings, np.array(risks, dtype=np.int64))


def load_caries(data_home=None) -> Labels:
    """Dental caries diagnoses (Espeland & Handelman 1989): 3869 patients, 5 dentists, 0/1."""
    frame = pd.read_csv(_file(data_home, "caries", "caries", "caries.csv"), comment="#")
    return Labels.from_frame(
        frame, item="item", annotator="coder", label="response", classes=[0, 1]
    )


@dataclass(frozen=True)
class Snow2008:
    """One task of Snow et al. 2008: crowd annotations and the expert ``gold`` per item.

    ``annotations``: :class:`Labels` (rte, temp, wsd) or :class:`Ratings` (affect tasks);
    ``gold``: Series indexed by item id, in the order of ``annotations.items``.
    """

    task: str
    annotations: Labels | Ratings
    gold: pd.Series


def load_snow2008(task: str, data_home=None) -> Snow2008:
    """A task of Snow et al. 2008: ``rte``, ``temp``, ``wsd`` (labels) or ``anger``,
    ``disgust``, ``fear``, ``joy``, ``sadness``, ``surprise``, ``valence`` (ratings)."""
    if task not in SNOW2008_LABEL_TASKS and task not in SNOW2008_RATING_TASKS:
        raise ValueError(
            f"unknown Snow et al. 2008 task {task!r}; one of "
            f"{sorted(SNOW2008_LABEL_TASKS) + sorted(SNOW2008_RATING_TASKS)}"
        )
    path = _file(data_home, f"Snow et al. 2008 ({task})", "snow2008", f"{task}.standardized.tsv")
    frame = pd.read_csv(path, sep="\t")
    columns = {"item": "orig_id", "annotator": "!amt_worker_ids"}
    if task in SNOW2008_LABEL_TASKS:
        classes = SNOW2008_LABEL_TASKS[task]
        annotations = Labels.from_frame(frame, **columns, label="response", classes=classes)
    else:
        scale = SNOW2008_RATING_TASKS[task]
        annotations = Ratings.from_frame(frame, **columns, score="response", scale=scale)
    per_item = frame.groupby("orig_id", sort=False)["gold"]
    n_gold = per_item.nunique(dropna=False)
    raise_first(
        (n_gold != 1).to_numpy(),
        lambda i: f"{task}: item {fmt(n_gold.index[i])} has {n_gold.iloc[i]} different gold values",
    )
    gold = per_item.first().reindex(annotations.items).rename_axis("item")
    if task in SNOW2008_LABEL_TASKS:
        raise_first(
            ~gold.isin(SNOW2008_LABEL_TASKS[task]).to_numpy(),
            lambda i: f"{task}: item {fmt(gold.index[i])} has gold {fmt(gold.iloc[i])} "
            "outside the classes",
        )
    return Snow2008(task, annotations, gold)


@dataclass(frozen=True)
class Mimori2021:
    """Label histograms of Mix-MNIST / Mix-CIFAR-10 (Mimori et al. 2021).

    ``votes``: ``(item, 10)`` histograms with the counts as given (1 vote per training
    row); ``meta``: one row per item in the same order, columns id, nrater, _mixed,
    _org_y, _org_id, _ratio, partition.
    """

    votes: Votes
    meta: pd.DataFrame


def load_mimori2021(
    dataset: str = "mixed_cifar10", variant: str = "t1_v1", data_home=None
) -> Mimori2021:
    """Mimori et al. 2021 histograms: ``dataset`` in {mixed_cifar10, mixed_mnist};
    ``variant`` e.g. ``t1_v1``, ``t1_v2``, ``t1_v5`` (1 label per train row, 1/2/5 per
    validation row, 10 per test row) or ``test_split.n1_s1.sam`` / ``.rem`` (test rows
    split into 1 sampled and 9 remaining labels)."""
    if dataset not in MIMORI2021_CLASSES:
        raise ValueError(
            f"unknown Mimori et al. 2021 dataset {dataset!r}; one of {sorted(MIMORI2021_CLASSES)}"
        )
    folder = _resolve(data_home) / "mimori2021" / dataset
    path = folder / f"{dataset}.{variant}.txt.gz"
    if not path.is_file():
        found = sorted(
            p.name.removeprefix(f"{dataset}.").removesuffix(".txt.gz") for p in folder.glob("*.txt.gz")
        )
        raise FileNotFoundError(
            f"Mimori et al. 2021 ({dataset}, {variant}): expected the file {path}; "
            f"variants found there: {found}"
        )
    frame = pd.read_csv(path, sep="\t", dtype={"_org_y": str, "_org_id": str})
    classes = MIMORI2021_CLASSES[dataset]
    raise_first(
        (frame["hist"].str.count(",") != len(classes) - 1).to_numpy(),
        lambda i: f"{dataset} id {fmt(frame['id'].iloc[i])}: hist {frame['hist'].iloc[i]!r} "
        f"does not have {len(classes)} counts",
    )
    counts = frame["hist"].str.split(",", expand=True).astype(np.int64).to_numpy()
    raise_first(
        counts.sum(axis=1) != frame["nrater"].to_numpy(),
        lambda i: f"{dataset} id {fmt(frame['id'].iloc[i])}: hist sums to {counts[i].sum()}, "
        f"nrater is {frame['nrater'].iloc[i]}",
    )
    votes = Votes(counts, frame["id"].to_numpy(), np.array(classes))
    return Mimori2021(votes, frame.drop(columns="hist").reset_index(drop=True))
