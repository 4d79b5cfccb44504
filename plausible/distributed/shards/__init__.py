"""Each label family's halves of the chain over shards (:mod:`plausible.distributed.
sharded_chain`): the Dawid–Skene family and annotator-beta (:mod:`.dawid_skene`), GLAD and
Su's model (:mod:`.difficulty`)."""
