"""Checkpoints of a chain over shards in a Zarr store: what a killed driver or worker resumes
from.

A chain over shards (:mod:`plausible.distributed.sharded_chain`) has a global half (the
driver's: its generator, the annotators' parameters and class prior, the draws kept so far)
and an item half (each shard's: its items' classes and state, generator and summaries). Every
``every`` sweeps both halves are written, so the chain can be rebuilt exactly as it was after
that sweep::

    store/chain-<key>/latest.json               the last complete checkpoint: its sweep,
                                                kept draws, directory and the driver's
                                                generator state (replaced atomically)
    store/chain-<key>/sweep-<t>/driver.zarr     the global state after sweep t
    store/chain-<key>/sweep-<t>/shard-<s>.zarr  shard s's classes, item state, generator
                                                and summaries (written by the shard,
                                                where it runs)
    store/chain-<key>/draws.zarr/<name>         the chain's kept draws ``(draw, ...)``, valid
                                                up to ``latest.json``'s ``kept``

``key`` is the chain's 63-bit key (drawn from its generator, so a re-run with the same seed
finds its chains' checkpoints). ``latest.json`` is written last, by an atomic rename, and names
a directory whose every part is complete: a checkpoint interrupted half-way is never read,
and older checkpoint directories are removed only after the new one is named. The store must
be a directory that every worker can write to (a local one for a local cluster, a shared
file system for a cluster of machines).

A generator's state (``numpy.random.Generator.bit_generator.state``, a dictionary of whole
numbers) is kept as JSON text.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import zarr

DRAW_CHUNK = 16
"""Kept draws per chunk of ``draws.zarr``'s arrays."""


def generator_state(rng: np.random.Generator) -> str:
    """``rng``'s state as JSON text."""
    return json.dumps(rng.bit_generator.state)


def set_generator_state(rng: np.random.Generator, text: str) -> None:
    """Put ``rng`` in the state :func:`generator_state` wrote."""
    rng.bit_generator.state = json.loads(text)


def write_arrays(path, arrays: dict, attrs: dict | None = None) -> None:
    """A Zarr group at ``path`` (replacing one there) holding ``arrays`` and ``attrs``."""
    group = zarr.open_group(str(path), mode="w")
    for name, value in arrays.items():
        value = np.asarray(value)
        group.create_array(name, shape=value.shape, dtype=value.dtype)[...] = value
    group.attrs.update(attrs or {})


def read_arrays(path) -> tuple[dict, dict]:
    """The arrays and attributes of the group :func:`write_arrays` wrote at ``path``."""
    group = zarr.open_group(str(path), mode="r")
    return {name: array[...] for name, array in group.arrays()}, dict(group.attrs)


def shard_path(directory, index: int) -> str:
    """Where shard ``index`` writes its part of the checkpoint in ``directory``."""
    return str(Path(directory) / f"shard-{index:05d}.zarr")


def _state_arrays(state) -> tuple[str, list]:
    """One entry of a global state (None, an array or a tuple of arrays) as a kind and
    arrays."""
    if state is None:
        return "none", []
    if isinstance(state, tuple):
        return "tuple", [np.asarray(s) for s in state]
    return "array", [np.asarray(state)]


def _from_state_arrays(kind: str, arrays: list):
    return {"none": lambda: None, "tuple": lambda: tuple(arrays),
            "array": lambda: arrays[0]}[kind]()


class ChainCheckpoints:
    """The checkpoints of every chain of one run in the directory ``store`` (module
    docstring), one every ``every`` sweeps."""

    def __init__(self, store, every: int = 200):
        if isinstance(every, bool) or int(every) != every or every < 1:
            raise ValueError(f"checkpoints must be every whole number >= 1 of sweeps, got "
                             f"{every!r}")
        self.store, self.every = Path(store), int(every)

    def _chain(self, key: int) -> Path:
        return self.store / f"chain-{key:019d}"

    def directory(self, key: int, sweep: int) -> Path:
        """Where chain ``key``'s checkpoint after ``sweep`` sweeps is written (created empty:
        the parts of an interrupted earlier try are removed)."""
        path = self._chain(key) / f"sweep-{sweep:09d}"
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        return path

    def latest(self, key: int) -> dict | None:
        """Chain ``key``'s last complete checkpoint (``sweep``, ``kept``, ``directory``,
        ``rng``), or None."""
        path = self._chain(key) / "latest.json"
        if not path.exists():
            return None
        latest = json.loads(path.read_text())
        latest["directory"] = str(self._chain(key) / latest["directory"])
        return latest

    def commit(self, key: int, sweep: int, directory, *, rng: np.random.Generator,
               global_state: tuple, kept: int, pending: dict[str, list]) -> None:
        """Complete chain ``key``'s checkpoint after ``sweep`` sweeps in ``directory`` (its
        shards' parts already written there): the global state (a tuple whose entries are
        None, arrays or tuples of arrays), the kept draws since the last checkpoint
        (``pending``: name -> draws; ``kept`` in all), then ``latest.json``; older
        checkpoints are removed."""
        arrays, kinds = {}, []
        for i, entry in enumerate(global_state):
            kind, parts = _state_arrays(entry)
            kinds.append([kind, len(parts)])
            arrays.update({f"global_{i}_{k}": a for k, a in enumerate(parts)})
        write_arrays(Path(directory) / "driver.zarr", arrays, {"global_state": kinds})
        self._append_draws(key, kept, pending)
        chain = self._chain(key)
        text = json.dumps({"sweep": int(sweep), "kept": int(kept),
                           "directory": Path(directory).name, "rng": generator_state(rng)})
        temporary = chain / f".latest.json.{os.getpid()}.tmp"
        temporary.write_text(text)
        os.replace(temporary, chain / "latest.json")
        for old in chain.glob("sweep-*"):
            if old.name != Path(directory).name:
                shutil.rmtree(old, ignore_errors=True)

    def _append_draws(self, key: int, kept: int, pending: dict[str, list]) -> None:
        for name, values in pending.items():
            if not values:
                continue
            block = np.stack(values)
            path = str(self._chain(key) / "draws.zarr" / name)
            try:
                array = zarr.open_array(path, mode="r+")
            except FileNotFoundError:
                array = zarr.create_array(path, shape=(0, *block.shape[1:]), dtype=block.dtype,
                                          chunks=(DRAW_CHUNK, *block.shape[1:]))
            first = kept - len(block)
            if array.shape[0] < kept:
                array.resize((kept, *block.shape[1:]))
            array[first:kept] = block

    def global_state(self, latest: dict) -> tuple:
        """The global state of a checkpoint (:meth:`latest`), as :meth:`commit` got it."""
        arrays, attrs = read_arrays(Path(latest["directory"]) / "driver.zarr")
        return tuple(_from_state_arrays(kind, [arrays[f"global_{i}_{k}"] for k in range(n)])
                     for i, (kind, n) in enumerate(attrs["global_state"]))

    def draws(self, key: int, kept: int) -> dict[str, np.ndarray]:
        """Chain ``key``'s first ``kept`` kept draws, name -> ``(kept, ...)``."""
        root = self._chain(key) / "draws.zarr"
        if kept == 0 or not root.exists():
            return {}
        return {path.name: zarr.open_array(str(path), mode="r")[:kept]
                for path in sorted(root.iterdir()) if not path.name.startswith(".")
                and path.is_dir()}


__all__ = ["ChainCheckpoints", "generator_state", "read_arrays", "set_generator_state",
           "shard_path", "write_arrays"]
