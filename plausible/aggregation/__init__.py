"""The front door: ``pl.aggregate`` from a table of annotations to a checked posterior.

::

    result = pl.aggregate(df)                 # crowd-kit's task, worker, label columns
    result.labels()                           # most plausible class, its probability, certainty
    result.evaluate(scores)                   # UA top-k accuracy with its spread over draws
    result.check()                            # convergence + posterior predictive checks
    result.next_items(50)                     # what to annotate next, by information gain
    result.prediction_sets(scores, alpha=0.1) # conformal sets under ambiguous ground truth
    result.report("report.html")              # one HTML page: convergence, annotators, checks
    result.to_frame(); result.save("run.nc"); pl.load("run.nc")

    pl.aggregate(votes, store="shards/")      # shards of independent items, kept and resumed
    pl.aggregate(labels, workers=4)           # one chain over shards on 4 workers
    pl.aggregate("labels/", client=client)    # Parquet files the workers read

``aggregate`` reads the data (:mod:`plausible.data.tables`), picks the model (named, or the
default for the data's format, :data:`DEFAULT_MODELS`, which says why; ``"auto"`` by name:
the candidate PSIS-LOO ranks first, stacked with the candidates of its meaning), builds it
through the registry, samples it with :func:`plausible.sample` in this process, or with its
items in shards in a store or on a Dask cluster, and wraps the trace in an
:class:`Aggregation`: the command line and every other caller fit through it.

One module a job: :mod:`~plausible.aggregation.fit` (``aggregate`` and the reading of its
data), :mod:`~plausible.aggregation.defaults` (the model fitted when none is named),
:mod:`~plausible.aggregation.choice` (``model="auto"``: the choice and the stacking),
:mod:`~plausible.aggregation.sharded` (the runs with their items in shards: on a cluster, in a
store, from a partitioned dataset),
:mod:`~plausible.aggregation.result` (:class:`Aggregation`, :class:`Check`, :func:`load`),
:mod:`~plausible.aggregation.tables` (the per-item tables) and
:mod:`~plausible.aggregation.persistence` (a run on disk, written atomically).

**Top class and certainty.** Per item, ``top_class`` is the class most often the most
plausible over the posterior draws (the class annotation certainty is about; ties to the
lowest class index), ``certainty_top1`` the share of draws in which it is, and
``probability_top_class`` its posterior mean plausibility. The three always describe the
same class (the argmax of the posterior mean can differ from the modal top-1 class when the
posterior is spread out).
"""

from plausible.aggregation.choice import stacked_trace
from plausible.aggregation.defaults import AUTO, DEFAULT_REASON, auto_candidates, default_model
from plausible.aggregation.fit import aggregate, as_annotations, data_for_model
from plausible.aggregation.persistence import write_atomic
from plausible.aggregation.result import Aggregation, Check, load
from plausible.aggregation.tables import (label_set_table, label_table,
                                          plausibility_columns)
from plausible.models.registry import AUTO_CANDIDATES, DEFAULT_MODELS

__all__ = ["AUTO", "AUTO_CANDIDATES", "DEFAULT_MODELS", "DEFAULT_REASON",
           "Aggregation", "Check", "aggregate", "as_annotations", "auto_candidates",
           "data_for_model", "default_model", "label_set_table", "label_table", "load",
           "plausibility_columns", "stacked_trace", "write_atomic"]
