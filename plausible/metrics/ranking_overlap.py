"""Average overlap between partial rankings with ties.

A partial ranking of ``K`` classes is given, per item, by the *block* of every class
(the reference implementation's "groups" format): ``0`` for the first block, ``1`` for
the second, ...; classes in one block are tied; ``-1`` marks the unranked classes, which
form an implicit last block. Block numbers only need to be ordered, not consecutive.

With ties ordered uniformly at random, the soft permutation matrix ``P~_b[i, j]`` is the
probability that class ``j`` sits at position ``i``. The spec's
``UAO@L(b, b') = Tr{(T P~_b)^T D_L (T P~_b')}`` (``T`` lower-triangular ones,
``D_L = diag(1/L, 1/(2L), ..., 1/L^2, 0, ...)``) only needs ``Q_b = T P~_b``, whose entry

    Q_b[k, j] = P(class j within the first k positions) = clip((k - s_j) / c_j, 0, 1)

with ``s_j`` the number of classes in blocks before ``j``'s block and ``c_j`` the size of
``j``'s block. Hence ``UAO@L(b, b') = (1/L) sum_{k=1}^{L} (1/k) <Q_b[k, :], Q_b'[k, :]>``,
computed vectorised over items without any ``K x K`` matrix. The normalised version
``meanAO@L = UAO(b, b') / sqrt(UAO(b, b) UAO(b', b'))`` is 1 for identical rankings. For
full rankings without ties it is the usual average overlap
``(1/L) sum_k |top-k(b) cap top-k(b')| / k``. If either ranking is empty (every class
``-1``) the result is 0, as in the reference.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from plausible.metrics.draws import as_draws
from plausible.metrics.meaning import expect_item_distribution
from plausible.metrics.options import OPTIONS
from plausible.metrics.predictions import align_item_class, score_positions
from plausible.metrics.selection import check_k
from plausible.metrics.storage import CLASS, ITEM

UNRANKED = -1


def _as_blocks(blocks, name: str) -> tuple[np.ndarray, dict]:
    """int64 ``(item, class)`` blocks and the item coords of a DataArray input."""
    coords = {}
    if isinstance(blocks, xr.DataArray):
        if set(blocks.dims) != {ITEM, CLASS}:
            raise ValueError(f"{name} must have dims ('item', 'class'), got {blocks.dims}")
        blocks = blocks.transpose(ITEM, CLASS)
        if ITEM in blocks.coords:
            coords[ITEM] = blocks[ITEM].values
        values = blocks.values
    else:
        values = np.asarray(blocks)
    if values.ndim != 2:
        raise ValueError(f"{name} must be an (item, class) array of block indices, got shape {values.shape}")
    if values.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer block indices, got dtype {values.dtype}")
    if values.size and values.min() < UNRANKED:
        raise ValueError(f"{name} holds block index {int(values.min())}; use -1 for unranked classes")
    return values.astype(np.int64, copy=False), coords


def _block_offsets(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(s, c)``, float ``(item, class)``: classes before each class's block, and its block size.

    Unranked classes (-1) form the last block. Vectorised over items: a stable sort of each
    row puts every block in one run; ``s`` is where the run starts, ``c`` its length.
    """
    n_items, n_classes = blocks.shape
    b = np.where(blocks == UNRANKED, blocks.max(initial=0) + 1, blocks)
    order = np.argsort(b, axis=1, kind="stable")
    runs = np.take_along_axis(b, order, axis=1)
    position = np.arange(n_classes)[np.newaxis, :]
    first = np.ones(runs.shape, dtype=bool)
    first[:, 1:] = runs[:, 1:] != runs[:, :-1]
    last = np.ones(runs.shape, dtype=bool)
    last[:, :-1] = first[:, 1:]
    start = np.maximum.accumulate(np.where(first, position, 0), axis=1)
    stop = np.minimum.accumulate(np.where(last, position, n_classes - 1)[:, ::-1], axis=1)[:, ::-1] + 1
    before = np.empty((n_items, n_classes))
    size = np.empty((n_items, n_classes))
    np.put_along_axis(before, order, start, axis=1)
    np.put_along_axis(size, order, stop - start, axis=1)
    return before, size


def _depths(depth, n_items: int, n_classes: int) -> np.ndarray:
    depth_arr = np.asarray(depth.values if isinstance(depth, xr.DataArray) else depth)
    if depth_arr.dtype.kind not in "iu":
        raise ValueError(f"depth must be an int or an (item,) int array, got {depth!r}")
    depth_arr = np.broadcast_to(depth_arr, (n_items,)) if depth_arr.ndim == 0 else depth_arr
    if depth_arr.shape != (n_items,):
        raise ValueError(f"depth has shape {depth_arr.shape}, expected () or (item={n_items},)")
    if depth_arr.size and (depth_arr.min() < 1 or depth_arr.max() > n_classes):
        raise ValueError(f"depth must be in 1..{n_classes} (the number of classes)")
    return depth_arr.astype(np.int64)


def _unnormalized(qa_parts, qb_parts, weights: np.ndarray) -> np.ndarray:
    """``sum_k w[i, k] <Q_a[i, k, :], Q_b[i, k, :]>`` for one chunk of items."""
    (sa, ca), (sb, cb) = qa_parts, qb_parts
    ks = np.arange(1, weights.shape[1] + 1, dtype=np.float64)[np.newaxis, :, np.newaxis]
    qa = np.clip((ks - sa[:, np.newaxis, :]) / ca[:, np.newaxis, :], 0.0, 1.0)
    qb = np.clip((ks - sb[:, np.newaxis, :]) / cb[:, np.newaxis, :], 0.0, 1.0)
    qa *= qb
    return (weights * qa.sum(axis=-1)).sum(axis=-1)


def average_overlap(blocks_a, blocks_b, depth, normalize: bool = True) -> np.ndarray | xr.DataArray:
    """Average overlap@L between two partial rankings with ties, per item.

    ``UAO@L(a, b) = (1/L) sum_{k=1}^{L} (1/k) sum_j Q_a[k, j] Q_b[k, j]`` with
    ``Q[k, j] = clip((k - s_j) / c_j, 0, 1)`` (see the module docstring); with
    ``normalize`` the result is ``UAO(a, b) / sqrt(UAO(a, a) UAO(b, b))`` (1 for identical
    rankings), else ``UAO(a, b)``. 0 where either ranking is empty.

    Parameters
    ----------
    blocks_a, blocks_b : int array_like or DataArray, shape (item, class)
        Block index of every class (0 = first block, equal = tied, -1 = unranked), e.g.
        a reader's ranking and :func:`scores_to_blocks` of a classifier's scores.
    depth : int or int array_like, shape (item,)
        ``L`` per item, ``1 <= L <= n_classes``.
    normalize : bool
        Divide by the geometric mean of the self-overlaps (default True).

    Returns
    -------
    numpy.ndarray or xarray.DataArray
        float64 ``(item,)``; a DataArray named ``average_overlap`` (with the item coords)
        when either input is one.
    """
    a, coords_a = _as_blocks(blocks_a, "blocks_a")
    b, coords_b = _as_blocks(blocks_b, "blocks_b")
    if a.shape != b.shape:
        raise ValueError(f"blocks_a has shape {a.shape} but blocks_b has shape {b.shape}")
    n_items, n_classes = a.shape
    depths = _depths(depth, n_items, n_classes)
    parts_a, parts_b = _block_offsets(a), _block_offsets(b)
    max_depth = int(depths.max(initial=1))
    ks = np.arange(1, max_depth + 1)
    # w[i, k-1] = 1 / (k L_i) for k <= L_i
    weights = np.where(
        ks[np.newaxis, :] <= depths[:, np.newaxis], 1.0 / (ks[np.newaxis, :] * depths[:, np.newaxis]), 0.0
    )

    result = np.empty(n_items)
    step = max(1, OPTIONS["chunk_elements"] // (4 * max_depth * max(n_classes, 1)))
    for i0 in range(0, n_items, step):
        rows = slice(i0, min(i0 + step, n_items))
        pa = tuple(p[rows] for p in parts_a)
        pb = tuple(p[rows] for p in parts_b)
        w = weights[rows]
        ab = _unnormalized(pa, pb, w)
        if normalize:
            aa = _unnormalized(pa, pa, w)
            bb = _unnormalized(pb, pb, w)
            with np.errstate(invalid="ignore", divide="ignore"):
                ab = np.where(ab > 0, ab / np.sqrt(aa * bb), 0.0)
        result[rows] = ab
    empty = (a == UNRANKED).all(axis=1) | (b == UNRANKED).all(axis=1)
    result[empty] = 0.0
    if coords_a or coords_b or isinstance(blocks_a, xr.DataArray) or isinstance(blocks_b, xr.DataArray):
        return xr.DataArray(
            result, dims=(ITEM,), coords=coords_a or coords_b, name="average_overlap",
            attrs={"normalize": int(normalize)},
        )
    return result


def ua_ranking_overlap(plausibility, blocks, depth: int) -> xr.DataArray:
    """UA average overlap@L of a partial ranking with ties and each draw's ranking.

    Per draw ``m`` and item ``i``: ``meanAO@L(Y(lambda^(m)_i), b_i)`` of
    :func:`average_overlap`, with ``Y`` the draw's ranking of the classes (strict, ties to the
    lowest class index) and ``b_i`` the given partial ranking (e.g. a classifier's top-k list
    with the rest unranked, or a reader's differential diagnosis). The draw's soft
    permutation is a permutation, so ``UAO(Y, Y) = 1`` and only its top ``L`` classes count:
    with ``S[i, j, p] = sum_{k=p+1}^{L} Q_b[i, k, j] / k``,

        UAO(Y, b_i) = (1/L) sum_{r=0}^{L-1} S[i, Y_r, r],
        meanAO = UAO(Y, b_i) / sqrt(UAO(b_i, b_i))     (0 for an empty ranking ``b_i``).

    With ``b`` the classifier's full ranking (:func:`scores_to_blocks`) this is
    :func:`~plausible.metrics.ua_average_overlap`.

    Parameters
    ----------
    plausibility : DataTree, Dataset, DataArray or top classes
        Plausibility draws in either storage (:func:`plausible.metrics.as_draws`).
    blocks : int array_like or DataArray, shape (item, class)
        Block index of every class (0 = first block, equal = tied, -1 = unranked), aligned to
        the draws like classifier scores.
    depth : int
        ``L``, ``1 <= L <= n_classes``.

    Returns
    -------
    xarray.DataArray
        float64 in ``[0, 1]``, dims ``(sample dims..., "item")``, named
        ``ua_ranking_overlap``, ``attrs["depth"] = L``. Memory: ``S`` holds
        ``n_items * n_classes * L`` floats.
    """
    draws = as_draws(plausibility)
    expect_item_distribution(draws.meaning, "ua_ranking_overlap")
    lay = draws.layout
    depth = check_k(depth, lay.n_classes, "depth")
    b, _ = _as_blocks(align_item_class(blocks, draws, "blocks"), "blocks")
    before, size = _block_offsets(b)
    ks = np.arange(1, depth + 1, dtype=np.float64)[np.newaxis, :, np.newaxis]
    q = np.clip((ks - before[:, np.newaxis, :]) / size[:, np.newaxis, :], 0.0, 1.0)  # (i, L, K)
    q[(b == UNRANKED).all(axis=1)] = 0.0  # an empty ranking overlaps nothing
    self_overlap = (q * q).sum(axis=-1) @ (1.0 / ks.ravel()) / depth  # UAO(b, b), (item,)
    tail = np.cumsum((q / ks)[:, ::-1], axis=1)[:, ::-1]  # tail[i, p, j] = sum_{k > p} q / k
    norm = np.where(self_overlap > 0, depth * np.sqrt(np.maximum(self_overlap, 1e-300)), np.inf)
    flat = (tail / norm[:, np.newaxis, np.newaxis]).transpose(0, 2, 1).reshape(-1)  # (i, K, L)
    rank = np.arange(depth)
    out = np.empty((lay.n_samples, lay.n_items))
    for block, top in draws.iter_top(depth):
        item = np.arange(block.items.start, block.items.stop)[:, np.newaxis]
        index = (item * lay.n_classes + top) * depth + rank  # (n, ni, L)
        flat.take(index).sum(axis=-1, out=out[block.samples, block.items])
    return draws.per_sample_item(out, "ua_ranking_overlap", attrs={"depth": depth})


def scores_to_blocks(scores) -> np.ndarray | xr.DataArray:
    """A classifier's full ranking in block format: block = rank position of each class.

    Classes are ordered by decreasing score, ties by lowest class index first, one class
    per block, so ``blocks[i, c]`` is the 0-based position of class ``c`` for item ``i``.

    Parameters
    ----------
    scores : array_like or DataArray, shape (item, class)

    Returns
    -------
    numpy.ndarray or xarray.DataArray
        int64 ``(item, class)`` (a DataArray, same dims and coords, named ``block``, for a
        DataArray input).
    """
    is_da = isinstance(scores, xr.DataArray)
    if is_da:
        if set(scores.dims) != {ITEM, CLASS}:
            raise ValueError(f"scores must have dims ('item', 'class'), got {scores.dims}")
        scores = scores.transpose(ITEM, CLASS)
    values = np.asarray(scores.values if is_da else scores, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"scores must be an (item, class) array, got shape {values.shape}")
    blocks = score_positions(values).astype(np.int64, copy=False)
    if is_da:
        return scores.copy(data=blocks).rename("block")
    return blocks
