"""The fitting protocol of Mimori et al. 2021: fit on 80 % of the items, stop early on the other 20 %.

Full-batch optimisers (L-BFGS) do not have epochs; early stopping here tracks the held-out
loss at every accepted iterate (and at the start), keeps the best one, and stops the
optimiser after ``patience`` iterates without improvement. With ``holdout = 0`` the fit
uses every item and simply runs to convergence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

#: The spec's early-stopping fraction.
HOLDOUT = 0.2
PATIENCE = 10


def holdout_split(n_items: int, holdout: float = HOLDOUT, seed: int | None = 0):
    """Random split of ``range(n_items)`` into sorted ``(fit, stop)`` index arrays with
    ``round(holdout * n_items)`` items held out (at least 1 when ``holdout > 0``, and at
    least 1 left to fit)."""
    if not 0.0 <= holdout < 1.0:
        raise ValueError(f"holdout must be in [0, 1), got {holdout!r}")
    n_stop = int(round(holdout * n_items))
    if holdout > 0:
        n_stop = max(n_stop, 1)
    if n_items - n_stop < 1:
        raise ValueError(f"{n_items} items are too few to hold {holdout:.0%} out and still fit")
    order = np.random.default_rng(seed).permutation(n_items)
    return np.sort(order[n_stop:]), np.sort(order[:n_stop])


@dataclass
class EarlyStopping:
    """Optimiser callback: ``callback(result)`` with ``result.x`` the current iterate.

    ``holdout_loss(x) -> float`` scores an iterate on the held-out items (``None``: no
    held-out items, the last iterate wins). Raises ``stop`` (the optimiser's own
    exception: ``StopIteration`` for ``scipy.optimize.minimize``,
    ``better_optimize.StopOptimization`` under ``pm.find_MAP``) after ``patience``
    iterates without improvement. ``best_x`` / ``best_loss`` / ``best_iter`` hold the
    winner; ``history`` the held-out loss of every iterate (iterate 0 = the start).
    """

    holdout_loss: Callable[[np.ndarray], float] | None
    patience: int | None = PATIENCE
    stop: type[BaseException] = StopIteration
    best_x: np.ndarray | None = None
    best_loss: float = np.inf
    best_iter: int = 0
    history: list[float] = field(default_factory=list)

    def start(self, x0) -> None:
        self._score(np.asarray(x0, dtype=float))

    def __call__(self, result=None, *args) -> None:
        x = result.x if hasattr(result, "x") else result
        self._score(np.asarray(x, dtype=float))
        stalled = len(self.history) - 1 - self.best_iter
        if self.holdout_loss is not None and self.patience is not None and stalled >= self.patience:
            raise self.stop()

    def _score(self, x: np.ndarray) -> None:
        loss = float(self.holdout_loss(x)) if self.holdout_loss is not None else -float(len(self.history))
        self.history.append(loss)
        if loss < self.best_loss or self.best_x is None:
            self.best_x, self.best_loss, self.best_iter = x.copy(), loss, len(self.history) - 1
