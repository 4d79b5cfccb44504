"""A run on disk. :meth:`~plausible.aggregation.Aggregation.save` writes the trace with the
model's name, format, options and selection in its attributes (:data:`META`) and a stacked
result's members in its ``members`` group, one child each (:func:`saved_tree`, written by
:func:`write_tree`); :func:`~plausible.aggregation.load` reads it back (:func:`read_tree`,
:func:`unpacked`), the annotations rebuilt from its ``observed_data`` and the known classes
from its ``constant_data`` (:func:`data_from_trace`, :func:`with_known`). Every file is
written atomically (:func:`write_atomic`): a failed write leaves nothing behind."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from plausible.data import Comparisons, Labels, LabelSets, Rankings, Ratings, Votes
from plausible.diagnostics.model_selection import Selection

META = ("plausible_model", "plausible_format", "plausible_options", "plausible_selection")
"""The attributes a saved trace carries: the model's name, the annotations' format, the
builder's options and (``model="auto"``) the selection, as JSON."""


def write_atomic(path: Path, write) -> None:
    """``write(tmp)`` to a temporary path in ``path``'s folder (created if it is not there, as
    the command line's output checks allow), then rename it to ``path`` (replacing a file or a
    Zarr folder); a failed write leaves no file behind."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    os.close(handle)
    os.unlink(tmp)
    try:
        write(tmp)
        if path.is_dir():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
        elif os.path.exists(tmp):
            os.unlink(tmp)
        raise


def saved_tree(trace: xr.DataTree, *, model: str, format: str, options: dict,
               selection: Selection | None, members: dict[str, xr.DataTree] | None
               ) -> xr.DataTree:
    """``trace`` as it is saved: the model's name, format, options and selection in its
    attributes, and ``members`` (a stacked result's members' saved trees, by name) in its
    ``members`` group."""
    tree = trace.copy()
    if "computed_when_read" in tree["posterior"].attrs:
        tree["posterior"].attrs["computed_when_read"] = ""  # written out below
    tree.attrs.update({"plausible_model": model, "plausible_format": format,
                       "plausible_options": repr(options)})
    if selection is not None:
        tree.attrs["plausible_selection"] = selection.to_json()
    if members is not None:
        tree["members"] = xr.DataTree(children=members)
    return tree


def write_tree(tree: xr.DataTree, path) -> Path:
    """``tree`` to ``path`` (netCDF, or Zarr for a ``.zarr`` path), atomically. Values
    computed when read are computed block by block as they are written."""
    path = Path(path)
    write_atomic(path, lambda tmp: tree.to_zarr(tmp) if path.suffix == ".zarr"
                 else tree.to_netcdf(tmp, engine="h5netcdf"))
    return path


def read_tree(path) -> xr.DataTree:
    """The tree saved at ``path`` (:func:`write_tree`), loaded; ``FileNotFoundError`` or
    ``ValueError`` saying why a path holds no saved aggregation."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.suffix == ".zarr":
        tree = xr.open_datatree(path, engine="zarr").load()
    else:
        try:
            opened = xr.open_datatree(path, engine="h5netcdf")
        except OSError as error:
            raise ValueError(f"{path} is not a saved plausible aggregation (not a netCDF file: "
                             f"{error}); save one with Aggregation.save or plausible aggregate "
                             "--save") from None
        with opened:
            tree = opened.load()
    if "plausible_model" not in tree.attrs:
        raise ValueError(f"{path} is not a saved plausible aggregation (no model name)")
    return tree


def unpacked(tree: xr.DataTree) -> tuple[dict, xr.DataTree | None]:
    """The attributes of :data:`META` a saved ``tree`` holds (the selection read back) and its
    ``members`` group (None without one), both taken out of ``tree``, which is left the
    trace."""
    attrs = {k: tree.attrs.pop(k) for k in META if k in tree.attrs}
    if "plausible_selection" in attrs:
        attrs["plausible_selection"] = Selection.from_json(attrs["plausible_selection"])
    members = tree["members"] if "members" in tree.children else None
    if members is not None:
        del tree["members"]
    return attrs, members


def with_known(trace: xr.DataTree, data) -> xr.DataTree:
    """``trace`` with ``constant_data/known_class (item,)`` (the class index, -1 where not
    known) when ``data`` has known classes, so a saved run keeps them."""
    if getattr(data, "known", None) is not None:
        constant = (trace["constant_data"].to_dataset() if "constant_data" in trace.children
                    else xr.Dataset())
        trace["constant_data"] = constant.assign(
            known_class=xr.DataArray(data.known, dims="item", coords={"item": data.items}))
    return trace


def data_from_trace(tree: xr.DataTree, kind: str):
    """The annotations a trace was fitted to, from its ``observed_data``."""
    observed = tree["observed_data"]
    if kind == "comparisons":  # the items are all it needs: its classes are rank positions
        won = observed["comparisons"]
        left, right = won["comparison_left"].values, won["comparison_right"].values
        return Comparisons.from_frame(pd.DataFrame({
            "worker": won["comparison_annotator"].values, "left": left, "right": right,
            "label": np.where(won.values.astype(bool), left, right)}),
            items=tree["posterior"]["item"].values)
    classes = tree["posterior"]["class"].values if "class" in tree["posterior"].coords else \
        tree["constant_data"]["class"].values
    if kind == "votes":
        votes = observed["votes"]
        return Votes(votes.values, votes["item"].values, votes["class"].values)
    if kind == "labels":
        labels = observed["labels"]
        frame = pd.DataFrame({"item": labels["label_item"].values,
                              "annotator": labels["label_annotator"].values,
                              "label": labels.values})
        labels = Labels.from_frame(frame, classes=classes)
        constant = tree["constant_data"] if "constant_data" in tree.children else None
        if constant is not None and "known_class" in constant.data_vars:
            codes = constant["known_class"]
            rows = codes.values >= 0
            labels = labels.with_known(pd.Series(classes[codes.values[rows]],
                                                 index=codes["item"].values[rows]))
        return labels
    if kind == "label_sets":
        sets = observed["label_sets"]
        frame = pd.DataFrame(sets.transpose("response", "class").values.astype(bool),
                             columns=list(sets["class"].values))
        frame.insert(0, "annotator", sets["response_annotator"].values)
        frame.insert(0, "item", sets["response_item"].values)
        return LabelSets.from_wide(frame, item="item", annotator="annotator",
                                   classes=list(sets["class"].values))
    if kind == "rankings":
        entries = observed["rankings"]
        reader = "entry_annotator" if "entry_annotator" in entries.coords else "entry_reader"
        frame = pd.DataFrame({"item": entries["entry_item"].values,
                              "reader": entries[reader].values,
                              "label": entries.values, "rank": entries["entry_block"].values})
        rankings = Rankings.from_long(frame, classes=classes)
        return rankings if reader == "entry_annotator" else replace(rankings, readers=None)
    ratings = observed["ratings"]
    frame = pd.DataFrame({"item": ratings["rating_item"].values,
                          "annotator": ratings["rating_annotator"].values,
                          "score": ratings.values})
    return Ratings.from_frame(frame)
