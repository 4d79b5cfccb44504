"""Dawid–Skene data drawn from its prior: the simulator of the simulation-based calibration
tests of its samplers."""

import numpy as np

import plausible as pl


def simulate_from_prior(rng, n_items: int = 40, n_annotators: int = 4, n_classes: int = 3):
    """``({"class_prior", "confusion"}, labels)``: ``pi ~ Dirichlet(1)``, every annotator's
    rows from the default confusion prior (4 on the diagonal, 1 elsewhere), every item's
    class from ``pi`` and one label from every annotator."""
    C = n_classes
    beta = pl.models.dawid_skene.confusion_concentration(C, (4.0, 1.0))
    pi = rng.dirichlet(np.ones(C))
    theta = np.stack([[rng.dirichlet(beta[c]) for c in range(C)] for _ in range(n_annotators)])
    z = rng.choice(C, n_items, p=pi)
    item = np.repeat(np.arange(n_items), n_annotators)
    annotator = np.tile(np.arange(n_annotators), n_items)
    label = (rng.random((item.size, 1)) > np.cumsum(theta[annotator, z[item]], axis=1)).sum(1)
    labels = pl.data.Labels(item=item, annotator=annotator, label=np.minimum(label, C - 1),
                            items=np.arange(n_items), annotators=np.arange(n_annotators),
                            classes=np.arange(C))
    return {"class_prior": pi, "confusion": theta}, labels
