"""The description of a run that a store directory keeps, so a re-run resumes only the same run.

A store of a sharded or checkpointed run (:mod:`plausible.distributed`'s shard traces,
:mod:`plausible.distributed.checkpoints`'s checkpoints) starts with ``run.json``: the
model, its options, the data's identity and the seed. A re-run with the same store resumes
when its description is equal, and is refused, naming the fields that differ, when not.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

RUN_FILE = "run.json"


def check_or_write_run(store, config: dict) -> None:
    """Write ``config`` (JSON-serialisable) as ``store/run.json`` in a new or empty directory
    ``store`` (created), or check that the one there is equal. ``ValueError`` naming the store
    when it is a file, describes another run, or holds other files and no ``run.json``."""
    store = Path(store)
    config = json.loads(json.dumps(config))
    if store.exists() and not store.is_dir():
        raise ValueError(f"store {store} is a file, not a directory; choose a new --store path")
    store.mkdir(parents=True, exist_ok=True)
    path = store / RUN_FILE
    if path.exists():
        existing = json.loads(path.read_text())
        if existing != config:
            diff = sorted(k for k in set(existing) | set(config) if existing.get(k) != config.get(k))
            raise ValueError(f"store {store} belongs to another run (differs in {diff}); "
                             "use a new --store path or delete this one")
        return
    if any(store.iterdir()):
        raise ValueError(f"store {store} holds files but no {RUN_FILE}; choose a new --store "
                         "path")
    temporary = store / f".{RUN_FILE}.{uuid.uuid4().hex}"
    temporary.write_text(json.dumps(config, indent=1, sort_keys=True))
    os.replace(temporary, path)


def read_run(store) -> dict:
    """The ``run.json`` of ``store``; ``ValueError`` when it has none."""
    path = Path(store) / RUN_FILE
    if not path.exists():
        raise ValueError(f"{store} is not a run's store (no {RUN_FILE})")
    return json.loads(path.read_text())


__all__ = ["RUN_FILE", "check_or_write_run", "read_run"]
