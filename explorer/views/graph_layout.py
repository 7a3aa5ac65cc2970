"""Node positions for the node-link view (Qt-free, run in a worker thread).

A force-directed layout (Fruchterman-Reingold) in plain NumPy: repulsion between all pairs in
row blocks (memory stays ~ block * n), attraction along edges with ``bincount``. A few
thousand vertices take a few seconds, which is why it never runs on the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

BLOCK = 512


def force_layout(n: int, rows: np.ndarray, cols: np.ndarray, *, seed: int = 0, iterations: int | None = None,
                 progress: Callable[[float], None] | None = None,
                 cancelled: Callable[[], bool] | None = None) -> np.ndarray:
    """Positions (n, 2) in about [-1, 1]^2 for a graph given as edge endpoint arrays."""
    rng = np.random.default_rng(seed)
    if n == 0:
        return np.zeros((0, 2))
    if n == 1:
        return np.zeros((1, 2))
    pos = rng.uniform(-1.0, 1.0, size=(n, 2)).astype(np.float32)
    if iterations is None:
        iterations = 80 if n <= 500 else (50 if n <= 1500 else 30)
    keep = rows != cols
    rows, cols = rows[keep].astype(np.int64), cols[keep].astype(np.int64)
    k = np.sqrt(4.0 / n)            # ideal edge length in a [-1, 1]^2 box
    temperature = 0.2
    cooling = temperature / (iterations + 1)
    for it in range(iterations):
        if cancelled is not None and cancelled():
            break
        disp = np.zeros_like(pos)
        for a in range(0, n, BLOCK):
            b = min(n, a + BLOCK)
            delta = pos[a:b, None, :] - pos[None, :, :]             # (block, n, 2)
            dist2 = np.einsum("ijk,ijk->ij", delta, delta)
            np.maximum(dist2, 1e-6, out=dist2)
            disp[a:b] += np.einsum("ijk,ij->ik", delta, (k * k) / dist2)
        if len(rows):
            d = pos[rows] - pos[cols]
            dist = np.sqrt(np.einsum("ij,ij->i", d, d)) + 1e-9
            pull = d * (dist / k)[:, None]
            disp[:, 0] -= np.bincount(rows, weights=pull[:, 0], minlength=n)
            disp[:, 1] -= np.bincount(rows, weights=pull[:, 1], minlength=n)
        # gentle gravity keeps disconnected parts on screen
        disp -= 0.05 * pos * n ** 0.5
        length = np.sqrt(np.einsum("ij,ij->i", disp, disp)) + 1e-9
        pos += disp / length[:, None] * np.minimum(length, temperature)[:, None]
        temperature -= cooling
        if progress is not None:
            progress((it + 1) / iterations)
    pos -= pos.mean(axis=0)
    scale = np.abs(pos).max()
    pos = pos.astype(np.float64)
    return pos / scale if scale > 0 else pos


def place_new_vertices(pos: dict[int, np.ndarray], new: list[int], neighbours: Callable[[int], np.ndarray],
                       seed: int = 0) -> None:
    """Give vertices without a position one near their placed neighbours (or at random)."""
    rng = np.random.default_rng(seed + len(pos))
    if pos:
        stacked = np.array(list(pos.values()))
        lo, hi = stacked.min(axis=0), stacked.max(axis=0)
    else:
        lo, hi = np.array([-1.0, -1.0]), np.array([1.0, 1.0])
    spread = max(float(np.max(hi - lo)), 1e-3)
    for v in new:
        placed = [pos[int(u)] for u in neighbours(v) if int(u) in pos]
        if placed:
            pos[v] = np.mean(placed, axis=0) + rng.normal(0.0, 0.03 * spread, 2)
        else:
            pos[v] = lo + rng.uniform(0.0, 1.0, 2) * (hi - lo)
