"""Shared helpers for the Plackett–Luce tests: random partial rankings with ties, a
brute-force likelihood by enumeration of every compatible order, and item tiling."""

import itertools

import numpy as np

from plausible.data.rankings import Rankings


def random_ranking(rng, n_classes, max_block=5, max_ranked=None):
    """One reader's blocks: a random prefix of a random order, cut into tied blocks."""
    max_ranked = n_classes if max_ranked is None else max_ranked
    order = rng.permutation(n_classes)
    m = int(rng.integers(1, max_ranked + 1))
    blocks, start = [], 0
    while start < m:
        size = int(rng.integers(1, max_block + 1))
        blocks.append(order[start:start + size][: m - start].tolist())
        start += size
    return blocks


def random_rankings(rng, n_items, n_classes, max_readers=3, max_block=5, max_ranked=None):
    selectors = [
        [random_ranking(rng, n_classes, max_block, max_ranked)
         for _ in range(int(rng.integers(1, max_readers + 1)))]
        for _ in range(n_items)
    ]
    return Rankings.from_selectors(selectors, classes=n_classes), selectors


def brute_force_likelihood(blocks, worth):
    """Sum over every order compatible with the blocks of the PL probability of that
    top-m sequence (the unranked classes are left unordered)."""
    worth = np.asarray(worth, dtype=float)
    total = 0.0
    for perms in itertools.product(*[itertools.permutations(b) for b in blocks]):
        sequence = [k for p in perms for k in p]
        remaining, prob = worth.sum(), 1.0
        for k in sequence:
            prob *= worth[k] / remaining
            remaining -= worth[k]
        total += prob
    return total


def brute_force_order_probabilities(block, later_mass, worth):
    """Conditional probability of each order of a tied block given the mass after it."""
    weights = {}
    for perm in itertools.permutations(block):
        remaining, prob = later_mass + sum(worth[k] for k in block), 1.0
        for k in perm:
            prob *= worth[k] / remaining
            remaining -= worth[k]
        weights[perm] = prob
    total = sum(weights.values())
    return {perm: w / total for perm, w in weights.items()}


def tile_items(rankings: Rankings, copies: int) -> Rankings:
    """``rankings`` with its items repeated ``copies`` times (copy ``c`` holds items
    ``c * n_items .. (c + 1) * n_items - 1``)."""
    n = rankings.n_items
    shift = (np.arange(copies)[:, None] * n).ravel()
    return Rankings(
        item=(rankings.item[None, :] + shift[:, None]).ravel(),
        reader=np.tile(rankings.reader, copies),
        label=np.tile(rankings.label, copies),
        block=np.tile(rankings.block, copies),
        n_readers=np.tile(rankings.n_readers, copies),
        items=np.arange(n * copies),
        classes=rankings.classes,
    )
