"""Benchmark: NIG certainty and UA accuracy at AVA scale (255,000 images x ~200 ratings).

Data: :func:`plausible.data.ratings_simulators.simulate_ava` (score histograms 1..10,
``Poisson(200)`` ratings per image), an image is *good* iff its mean score is ``>= 5``;
hyper-parameters by empirical Bayes; a simulated classifier decides good/bad from the
latent mean plus ``N(0, 0.3^2)`` noise.

Timed phases (wall time, ``tracemalloc`` peak of the phase's allocations, and the growth of
the process's peak RSS during the phase where ``/proc/self/clear_refs`` may be reset):

1. closed form: the per-image NIG posterior and ``max(P(mu < 5), P(mu >= 5))`` from the
   Student-t marginal, all images (target < 5 s);
2. streamed Monte Carlo: ``stream_certainty`` with 1000 exact draws per image, per-image
   top-1 counts and per-draw UA accuracy, never holding the draws (targets < 60 s, < 2 GB);
3. peer (metric layer): the same draws materialised as a ``plausibility (chain, draw, item,
   class)`` DataArray for the first ``--peer-draws`` draws and read by
   ``pl.metrics.label_certainty`` and ``pl.metrics.ua_topk_accuracy``; numbers must equal
   the stream's on those draws; throughput per draw compared with the stream's.

Printed ratios: streamed MC / closed form (time), stream / metric layer (time per draw),
and agreement of MC with closed-form certainty (max deviation in binomial standard errors).

Run: ``python benchmarks/bench_ratings_ava.py [--items 255000] [--ratings 200] [--draws 1000]``.
"""

from __future__ import annotations

import argparse
import re
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import xarray as xr
from scipy import stats

import plausible as pl
from plausible.data.ratings_simulators import simulate_ava
from plausible.models import ratings as nig

SEED = 20240601


def _status_kib(field: str) -> int | None:
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    match = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
    return int(match.group(1)) if match else None


def _reset_peak_rss() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


@contextmanager
def measured(name: str, results: dict):
    """Wall time, tracemalloc peak (MiB) and peak-RSS growth (MiB) of the block."""
    can_reset = _reset_peak_rss()
    rss_before = _status_kib("VmRSS")
    tracemalloc.start()
    start = time.perf_counter()
    yield
    wall = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    hwm = _status_kib("VmHWM")
    rss_growth = (hwm - rss_before) / 1024 if can_reset and hwm and rss_before else float("nan")
    results[name] = {"wall_s": wall, "tracemalloc_peak_mib": peak / 2**20, "rss_growth_mib": rss_growth}
    print(f"{name:<34} {wall:8.2f} s   tracemalloc peak {peak / 2**20:8.1f} MiB   "
          f"peak RSS growth {rss_growth:8.1f} MiB", flush=True)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=255_000)
    parser.add_argument("--ratings", type=float, default=200.0, help="mean ratings per image")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--peer-draws", type=int, default=20)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    threshold = 5.0
    results: dict = {}

    with measured("simulate AVA histograms", results):
        ava = simulate_ava(args.items, ratings_per_item=args.ratings, seed=args.seed)
        summary = ava.summary()
    print(f"  {args.items:,} images, {int(summary.count.sum()):,} ratings "
          f"({summary.count.mean():.1f} per image), {ava.good.mean():.1%} good (mean >= 5)")
    rng = np.random.default_rng(args.seed + 1)
    predictions = ava.latent_mean + rng.normal(0, 0.3, args.items) >= threshold

    with measured("empirical Bayes fit", results):
        fit = nig.fit_empirical_bayes(summary)
    print(f"  {fit.prior}")

    with measured("closed-form certainty", results):
        post = nig.nig_posterior(summary, fit.prior)
        closed = post.certainty(threshold)
        prob_below = post.prob_below(threshold)

    with measured(f"streamed MC ({args.draws} draws)", results):
        streamed = nig.stream_certainty(post, threshold, draws=args.draws, predictions=predictions,
                                        seed=args.seed + 2)

    peer_draws = min(args.peer_draws, args.draws)
    warm = xr.DataArray(np.random.default_rng(0).random((1, 2, 3, 2)), dims=("chain", "draw", "item", "class"))
    pl.metrics.label_certainty(warm), pl.metrics.ua_topk_accuracy(warm, np.ones((3, 2)), k=1)  # JIT warm-up
    with measured(f"stream, first {peer_draws} draws", results):
        stream_head = nig.stream_certainty(post, threshold, draws=peer_draws, predictions=predictions,
                                           seed=args.seed + 2)
    with measured(f"metric layer, first {peer_draws} draws", results):
        mu = np.empty((peer_draws, args.items))
        sigma2 = np.empty((peer_draws, args.items))
        for rows, m, log_sigma in nig.iter_draws(post, peer_draws, seed=args.seed + 2):
            mu[rows], sigma2[rows] = m, np.exp(2 * log_sigma)
        plaus = xr.DataArray(
            nig.threshold_plausibility(mu, sigma2, threshold)[np.newaxis],
            dims=("chain", "draw", "item", "class"), name="plausibility",
        )
        del mu, sigma2
        label = pl.metrics.label_certainty(plaus)
        scores = np.stack([~predictions, predictions], axis=1).astype(float)
        peer_accuracy = pl.metrics.ua_topk_accuracy(plaus, scores, k=1).mean("item")
        del plaus

    # --- checks --------------------------------------------------------------------------
    assert np.array_equal(label.values, stream_head.label_certainty.values), "metric layer != stream"
    np.testing.assert_allclose(peer_accuracy.values, stream_head.ua_accuracy.values, rtol=0, atol=1e-12)
    mc_below = streamed.label_certainty.values[:, 0]
    se = np.sqrt(prob_below * (1 - prob_below) / args.draws) + 1.0 / args.draws
    deviation = np.abs(mc_below - prob_below) / se
    certainty_gap = np.abs(streamed.annotation_certainty.values - closed.values)

    t_closed = results["closed-form certainty"]["wall_s"]
    t_stream = results[f"streamed MC ({args.draws} draws)"]["wall_s"]
    t_head = results[f"stream, first {peer_draws} draws"]["wall_s"]
    t_peer = results[f"metric layer, first {peer_draws} draws"]["wall_s"]
    accuracy = pl.metrics.summarize(streamed.ua_accuracy)
    print()
    print(f"closed form: mean certainty {float(closed.mean()):.4f}, "
          f"{float((closed > 0.95).mean()):.1%} of images above 0.95")
    print(f"streamed MC: mean certainty {float(streamed.annotation_certainty.mean()):.4f}; "
          f"UA accuracy {float(accuracy['mean']):.4f} +- {float(accuracy['std']):.4f} "
          f"(min {float(accuracy['min']):.4f}, max {float(accuracy['max']):.4f}) over draws")
    bound = stats.norm.isf(0.0005 / args.items)  # two-sided 99.9 % Bonferroni over images
    print(f"MC vs closed form: max |P_MC(mu<t) - P(mu<t)| = {deviation.max():.2f} s.e. over "
          f"{args.items:,} images (99.9 % Bonferroni bound {bound:.2f}; share beyond 3 s.e. "
          f"{np.mean(deviation > 3):.4f}); max |certainty gap| {certainty_gap.max():.4f}")
    assert deviation.max() < bound, "Monte Carlo certainty disagrees with the closed form"
    print(f"ratio streamed MC / closed form (time): {t_stream / t_closed:.1f}x")
    print(f"ratio metric layer / stream per draw (time, first {peer_draws} draws): {t_peer / t_head:.2f}x")
    stream_peak = results[f"streamed MC ({args.draws} draws)"]
    peak = max(stream_peak["tracemalloc_peak_mib"], np.nan_to_num(stream_peak["rss_growth_mib"]))
    print(f"targets: closed form {t_closed:.2f} s (< 5 s: {t_closed < 5}), streamed {t_stream:.1f} s "
          f"(< 60 s: {t_stream < 60}), streamed peak {peak:.0f} MiB (< 2 GB: {peak < 2048})")
    return results


if __name__ == "__main__":
    main()
