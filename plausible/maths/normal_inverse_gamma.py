"""The conjugate Normal–Inverse-Gamma update, shared by the ratings models and their samplers.

Prior ``sigma2 ~ InvGamma(alpha0, beta0)``, ``mu | sigma2 ~ N(mu0, sigma2 / kappa0)``; ``n``
observations with log-likelihood times ``gamma`` (and weights ``w_j``, e.g. annotator
precisions), ``w = gamma sum_j w_j``, weighted mean ``xbar`` and weighted sum of squared
deviations ``SS``::

    kappa_n = kappa0 + w
    mu_n    = (kappa0 mu0 + w xbar) / kappa_n
    alpha_n = alpha0 + gamma n / 2
    beta_n  = beta0 + gamma SS / 2 + kappa0 w (xbar - mu0)^2 / (2 kappa_n)

(:mod:`plausible.models.ratings.nig` holds the rest of the closed form.)
"""

from __future__ import annotations


def conjugate_update(mu0, kappa0, alpha0, beta0, count, weight, mean, sum_sq_dev, reliability=1.0):
    """NIG posterior parameters ``(kappa_n, mu_n, alpha_n, beta_n)`` (module).

    Plain arithmetic, so it works on numpy arrays and on pytensor tensors alike.
    ``count`` ``n``, ``weight`` ``sum_j weight_j`` (``= n`` unweighted), ``mean`` the
    (weighted) item mean, ``sum_sq_dev`` the (weighted) sum of squared deviations from it.
    """
    w = reliability * weight
    kappa_n = kappa0 + w
    mu_n = (kappa0 * mu0 + w * mean) / kappa_n
    alpha_n = alpha0 + 0.5 * reliability * count
    beta_n = beta0 + 0.5 * reliability * sum_sq_dev + 0.5 * kappa0 * w * (mean - mu0) ** 2 / kappa_n
    return kappa_n, mu_n, alpha_n, beta_n


__all__ = ["conjugate_update"]
