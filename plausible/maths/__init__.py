"""Maths shared by models and samplers, below both: pure functions of arrays that know no
container, model or trace.

* :mod:`plausible.maths.logspace` — log-scale Gamma / Dirichlet draws, log-sigmoids,
  compiled sums of ``log(1 + exp(-x))``;
* :mod:`plausible.maths.plackett_luce` — the exact tied Plackett–Luce likelihood in candidate
  space and its index layout;
* :mod:`plausible.maths.fallibility` — Su's known-parameter label likelihoods;
* :mod:`plausible.maths.categorical` — vectorised categorical draws.
"""
