"""Scale-out: sampling on a Dask cluster, with the work in shards of items.

Two routes, by what a model's items share:

* :mod:`~plausible.distributed.item_shards`: models whose items are conditionally
  independent given fixed hyper-parameters (the registry's ``item_independent``) are sampled
  shard by shard with the ordinary sampler, each shard's posterior written to a Zarr store
  (:func:`run_shards`, :func:`open_trace`, :func:`stream_metrics`);
* :mod:`~plausible.distributed.cluster_chain`: label models whose items share the
  annotators' parameters run one Markov chain whose item half is split over shards on the
  workers (:func:`sample_on_cluster`, :func:`sample_partitions`), by
  :mod:`~plausible.distributed.sharded_chain` with each family's halves
  (:mod:`~plausible.distributed.shards`), checkpointed (:mod:`~plausible.distributed.
  checkpoints`) to a run store (:mod:`~plausible.distributed.run_stores`).
"""

from plausible.distributed.cluster_chain import (runs_on_cluster, sample_on_cluster,
                                                 sample_partitions)
from plausible.distributed.item_shards import (ShardFailure, ShardReport, connect, open_shard,
                                               open_trace, run_shards, sample_shards_in_memory,
                                               stream_metrics)

__all__ = [
    "ShardFailure",
    "ShardReport",
    "connect",
    "open_shard",
    "open_trace",
    "run_shards",
    "runs_on_cluster",
    "sample_on_cluster",
    "sample_partitions",
    "sample_shards_in_memory",
    "stream_metrics",
]
