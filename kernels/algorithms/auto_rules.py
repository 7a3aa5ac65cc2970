"""The rules behind the ``auto`` parameter values: features of the input → a launch parameter.

Each rule is a pure function of a few features a performance engineer would look at (row
lengths, out-degrees after orientation, k), with the reason in words; the ``*_rule`` adapters
read those features from the prepared :class:`~kernels.algorithms.registry.Problem` (reusing
what ``prepare`` or the variant builds anyway: at most O(n + m) over arrays already there) and
are what the families attach to their ``Param(auto=...)`` (an adapter that reads a family's own
modules, triangles' ``group_size``, lives in that family: this module imports no family). Why
each rule is what it is, and the measurements it was fitted on, are in ``docs/defaults.md``.

Only NumPy at module level: the registry imports this module when it lists the algorithms.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from kernels.algorithms.registry import AutoChoice, Problem

_device_trials = contextvars.ContextVar("auto_device_trials", default=True)


@contextlib.contextmanager
def device_trials_off():
    """Inside: no ``auto`` rule launches anything on the device to choose (k-clique's ``work``
    takes its feature rule instead of a measured trial). A compile-ahead process resolves its
    cells so: it must not run kernels beside the measuring process."""
    token = _device_trials.set(False)
    try:
        yield
    finally:
        _device_trials.reset(token)


def device_trials_allowed() -> bool:
    return _device_trials.get()


MAX_LANES = 32
#: threads a large GPU holds at once (about kernels.cuda.device.NOMINAL's SMs x resident threads): the triangle rule's
#: "does the graph fill the GPU" bound; a fixed figure so that auto depends on the input only
THREADS_IN_FLIGHT = 1 << 18
#: entries a thread of a row's group should sum at least before the group reduces (SpMV)
ENTRIES_PER_LANE = 4
#: k-clique (docs/defaults.md): out-neighbourhoods all this small (or smaller) are a mesh's
KCLIQUE_SHALLOW = 8
#: k-clique: d⁺max under this many times the mean out-degree is a uniform graph (no imbalance)
KCLIQUE_SKEW = 2.0
#: k-clique at k = 4: from this many (k-1)-subsets in all (sum of C(d⁺, 3)) a bitmap per vertex pays
KCLIQUE_K4_SEARCH = 5.0e5
#: k-clique at k = 4 on shallow graphs: from this much search, sorted lists beat a block per edge
KCLIQUE_MESH_SEARCH = 5.0e4
#: k-clique at k >= 5: below this many subsets in all the run is launch-bound
KCLIQUE_TINY_SEARCH = 7.0e3
#: k-clique at k = 5: edge-centric once the largest vertex's longest subtree is this share of one
#: SM's even share of all the vertices' longest subtrees
KCLIQUE_TAIL5 = 0.3
#: k-clique: under this share of out-neighbour pairs adjacent (sparse random-like graphs, few
#: cliques) sorted lists win whatever the subset count says: they prune at the first intersection.
#: Refit 2026-11-28 on all 194 measured cases: the measured graphs leave a gap from 0.067 (G1, exact)
#: to 0.15 (Chung-Lu n=20,000), 0.1 its middle; leave-one-graph-out refits 0.091..0.143
KCLIQUE_SPARSE_PAIRS = 0.1
#: k-clique at k = 4 on such sparse graphs: from this mean out-degree the sorted lists are long
#: enough that merging them costs more than a bitmap per vertex (G(n, p) at mean d⁺ 24 and 40
#: went vertex-centric 1.3x faster; every sparse graph up to mean d⁺ 12 went list)
KCLIQUE_K4_LONG_LISTS = 16.0
#: k-clique at k = 4 with real search and short out-lists (mean d⁺ < KCLIQUE_K4_LONG_LISTS): under this
#: many 4-cliques per edge (sampled_clique_counts) the bitmap build is most of the work and sorted
#: lists win. Fitted 2026-11-28 on all 250 measured cases (sampled values): a gap from 1.2 (power-law
#: matrix, list 1.14x faster) and 1.45 (a tie) to 2.95 (a 2-D geometric graph, a tie) and 4.2 (a 3-D
#: one, vertex 1.11x faster); leave-one-graph-out refits 1.88..2.47
KCLIQUE_K4_FEW_CLIQUES = 2.0
#: k-clique at k >= 5: under this many k-cliques per edge the search dies out before the last level
#: (sorted lists prune a candidate list too short to finish a clique; the bitmap kernels push it).
#: The measured graphs leave a gap (sampled values) from 0.004 (community R-MAT at k = 6, list 1.25x
#: faster than vertex; the power-law matrix at k = 6, list 2.4x faster than edge, reads 0) to 0.09
#: (the same R-MAT at k = 5, vertex 1.18x faster); leave-one-graph-out refits 0.019..0.059
KCLIQUE_DYING = 0.02
#: k-clique at k >= 5: from this mean out-degree bitmaps win even where pairs are sparse or the search
#: dies (a merge of two 50-entry lists costs tens of steps, a bitmap AND two words): no ``list`` there.
#: Fixed as a candidate before the fourth check (G(n, p) at mean d⁺ 60: vertex 1.35-1.73x faster than
#: list at k = 5, 6; at 40 list 1.07-1.44x faster), shipped 2026-11-28 after it: the check's G(n, p) at
#: mean d⁺ 63 went list and lost 1.24-1.88x, at 36 list and won. Now two G(n, p) graphs each side (36, 40
#: list; 60, 63 vertex); leave-one-graph-out folds 46.5..50.1 (kclique_sampled_fit.py, docs/defaults.md)
KCLIQUE_LONG_LISTS = 48.0
#: k-clique at k >= KCLIQUE_DEEP_K: a sampled search that finds at least this many k-cliques per edge
#: is deep whatever the pair density says, and the sparse-pairs branch does not send it to ``list``
#: (the rest of the rule decides). Chosen 2026-11-28 after the fourth check's Chung-Lu n = 100,000,
#: exponent 2.5 (pairs 0.081, yet 0.24 and 0.17 sampled 6- and 7-cliques per edge on skewed out-degrees:
#: list picked, edge 1.19x and 1.79x faster); the dying cut, so that nothing falls between the two.
#: With KCLIQUE_LONG_LISTS at 48 (rule (d') of docs/defaults.md), replayed on all 326 measured cases:
#: 319 within 10 %, worst 1.38x (the rule measured on the fourth check: 312, 1.88x); on the fourth
#: check 73 of 76, worst 1.35x (68, 1.88x); leaving one graph out 318, 1.38x (deep folds 0.011..0.083).
#: In sample: the fifth check (``bench_kclique_auto.py --check5``) is its test on unseen graphs
KCLIQUE_DEEP = KCLIQUE_DYING
#: ... from this k only: at k = 5 the same Chung-Lu graph (0.23 per edge) wants list, as Chung-Lu 2.5
#: and 2.6 of the second check (an override at k >= 5 costs them 1.33x and 1.47x: 317 of 326, worst
#: 1.47x); at k >= 6 the check2 Chung-Lu 2.6 graph (0.022 per edge, edge 1.03x faster) supports it too
KCLIQUE_DEEP_K = 6
#: out-neighbour pairs sampled for that share (a fixed seed: ``auto`` depends on the input only)
KCLIQUE_PAIR_SAMPLES = 4096
#: k-clique: the sampled search (``sampled_clique_counts``): cliques followed per level, out-neighbour
#: pairs drawn at most to find the first of them, and candidate look-ups per level at most (the cap)
KCLIQUE_SEARCH_PARTICLES = 1024
KCLIQUE_SEARCH_PAIRS = 1 << 16
KCLIQUE_SEARCH_TESTS = 1 << 16


def pow2_floor(x: float) -> int:
    """The largest power of two <= x (1 for x < 2)."""
    return 1 << max(int(np.floor(np.log2(x))), 0) if x >= 1 else 1


def pow2_ceil(x: float) -> int:
    """The smallest power of two >= x (1 for x <= 1)."""
    return 1 << max(int(np.ceil(np.log2(x))), 0) if x > 1 else 1


def clamp_lanes(lanes: int, limit: int = MAX_LANES) -> int:
    return max(1, min(int(lanes), int(limit)))


def entry_weighted_length(lengths: np.ndarray) -> float:
    """The length of the row a typical entry lives in, Σ L² / Σ L (the mean row length when all
    rows are alike; near the long rows' length when a few long rows hold most entries)."""
    lengths = np.asarray(lengths, dtype=np.float64)
    total = lengths.sum()
    return float((lengths * lengths).sum() / total) if total > 0 else 0.0


# ---- SpMV: threads per row ---------------------------------------------------------------

def spmv_threads_per_row(lengths: np.ndarray, limit: int = MAX_LANES, n_rows: int | None = None,
                         threads_in_flight: int = THREADS_IN_FLIGHT) -> AutoChoice:
    """Threads sharing a row: the power of two at most (entry-weighted row length) / 4, so that
    every lane sums about four entries or more before the log2(T)-step reduction; 1..32 and at
    most ``limit``. Weighting by entries makes a few hub rows (power-law matrices) call for wide
    groups, as they should: those rows are the critical path.

    With ``n_rows``: a matrix too small to fill the GPU at that width gets wider groups, up to
    the power of two >= the row length (no wider than a row) and the lanes the GPU can give each
    row (threads in flight / rows): idle SMs cost more than idle lanes. On the H100 with graph
    replays every real matrix under ~3·10^4 rows was fastest with 8-32 lanes (docs/defaults.md)."""
    length = entry_weighted_length(lengths)
    lanes = clamp_lanes(pow2_floor(length / ENTRIES_PER_LANE), limit)
    why = f"rows hold {length:.1f} entries, weighted by entries; {ENTRIES_PER_LANE}+ entries per lane → {lanes}"
    if n_rows:
        room = clamp_lanes(min(pow2_floor(threads_in_flight / n_rows), pow2_ceil(length)), limit)
        if room > lanes:
            why += f"; only {n_rows:,} rows: room for {room} lanes each → {room}"
            lanes = room
    return AutoChoice(lanes, why + " per row")


def _row_lengths(problem: Problem) -> np.ndarray:
    return np.diff(np.asarray(problem.data.get("indptr", problem.graph.indptr), dtype=np.int64))


def tunable_rows_rule(problem: Problem, params: dict, target: str) -> AutoChoice:
    """``gpu-tunable``'s ``rows`` = wg / threads per row."""
    wg = int(params["wg"])
    lengths = _row_lengths(problem)
    choice = spmv_threads_per_row(lengths, limit=min(MAX_LANES, wg), n_rows=len(lengths))
    rows = wg // choice.value
    return AutoChoice(rows, f"{choice.reason}: wg {wg} / {choice.value} = {rows} rows")


def adaptive_threads_rule(problem: Problem, params: dict, target: str) -> AutoChoice:
    """``gpu-adaptive``'s ``threads_per_row``, from its short rows only (the others have their
    own bins); it matters in short_mode group."""
    lengths = _row_lengths(problem)
    short = lengths[lengths <= int(params["short_row"])]
    choice = spmv_threads_per_row(short, n_rows=len(lengths))
    return AutoChoice(choice.value, f"short rows (<= {params['short_row']} entries): {choice.reason}; "
                                    "used when short_mode is group")


#: gpu-adaptive: pieces of rows one block takes; about this many pieces' worth of work in all
RESIDENT_PIECES = 1024
LONG_ROW_MIN, LONG_ROW_MAX = 256, 16384


def spmv_long_row(nnz: int, short_row: int) -> AutoChoice:
    """``gpu-adaptive``'s ``long_row``: the largest power of two <= nnz / 1024, within 256..16384
    (and at least ``short_row``). A row longer than ``long_row`` is cut into chunks of one block
    each; a shorter one is a single warp's. About a thousand blocks are resident on an H100 at
    once, so a piece of more than 1/1024 of the entries is the product's critical path: on the
    small power-law matrices users load (10^5-10^6 entries, rows of 2-8 thousand) one warp per
    such row made gpu-adaptive 1.15-5.3x slower than cuSPARSE's device time, and 256-512
    0.5-0.8x (``benchmarks/diag/spmv_long_row_small.py``, H100); on 10^8 entries 16384 stays best."""
    value = max(LONG_ROW_MIN, min(LONG_ROW_MAX, pow2_floor(max(nnz, 1) / RESIDENT_PIECES)))
    value = max(value, pow2_ceil(max(int(short_row), 1)))
    return AutoChoice(value, f"{nnz:,} entries / {RESIDENT_PIECES} resident pieces, a power of two in "
                             f"{LONG_ROW_MIN}..{LONG_ROW_MAX}: rows over {value} entries are split over blocks")


def adaptive_long_row_rule(problem: Problem, params: dict, target: str) -> AutoChoice:
    return spmv_long_row(int(problem.graph.nnz), int(params["short_row"]))


# ---- triangles/gpu-oriented: group size ----------------------------------------------------

def triangles_group_size(mean_partner_length: float, owners: int, n_vertices: int = 0,
                         threads_in_flight: int = THREADS_IN_FLIGHT) -> AutoChoice:
    """A group streams a partner's out-list through its owner's hash table, ``group_size``
    entries a step. While the owners leave the GPU room (owners x lanes <= the threads it holds
    at once), enough lanes to take a typical partner list in one step: the power of two >= its
    mean length, for the shortest critical path. When they would fill it, no lane should idle:
    at least four entries per lane (the power of two <= mean / 4, as SpMV's rule), which also
    makes fewer block rounds.

    A graph too small to fill the GPU (fewer than half the threads in flight per 32 lanes of
    each vertex) gets wider groups whatever its lists: idle SMs cost more than idle lanes, and on
    the H100 (graph replays) every real graph under ~10^4 vertices ran fastest at 16-32 lanes
    (docs/defaults.md): lanes >= the power of two <= (threads in flight / 2) / vertices."""
    lanes = clamp_lanes(pow2_ceil(mean_partner_length))
    why = f"mean partner out-list {mean_partner_length:.1f} → {lanes} lanes"
    if owners * lanes > threads_in_flight:
        full = clamp_lanes(pow2_floor(mean_partner_length / ENTRIES_PER_LANE))
        why += (f"; {owners:,} owners x {lanes} fill the {threads_in_flight:,} threads in flight → "
                f"{ENTRIES_PER_LANE}+ entries per lane → {full}")
        lanes = full
    if n_vertices > 0:
        room = clamp_lanes(pow2_floor(threads_in_flight / 2 / n_vertices))
        if room > lanes:
            why += f"; only {n_vertices:,} vertices: the GPU has room for {room} lanes each → {room}"
            lanes = room
    return AutoChoice(lanes, why)


# ---- k-clique: vertex- or edge-centric, group size ----------------------------------------

@dataclass(frozen=True)
class CliqueSearch:
    """What the k-clique ``work`` rule reads from the degree-oriented DAG: its out-degrees, and
    the search they imply at k (each vertex's subsets of k-1 out-neighbours, C(d⁺, k-1): the
    leaves of the binary-encoded search when every subset were a clique, an upper bound that
    orders inputs as their search does)."""

    k: int
    n: int
    mean_out_degree: float
    max_out_degree: int
    total_search: float          # sum over vertices of C(d⁺, k-1)
    sms: int
    longest_subtree_share: float = 0.0   # see ``of``
    pair_density: float = 1.0            # share of out-neighbour pairs adjacent (out_pair_density); 1: unknown
    cliques_per_edge: float | None = None  # estimated k-cliques per edge (sampled_clique_counts); None: unknown

    @classmethod
    def of(cls, out_degrees: np.ndarray, k: int, sms: int) -> CliqueSearch:
        out_degrees = np.asarray(out_degrees, dtype=np.int64)
        n = int(len(out_degrees))
        counts = np.bincount(out_degrees) if n else np.zeros(1, dtype=np.int64)
        # one binomial per distinct degree (at most a few hundred), exact as Python integers
        total = float(sum(int(c) * math.comb(d, k - 1) for d, c in enumerate(counts.tolist()) if c))
        sms = max(1, int(sms))
        # the subtree under a vertex's first out-neighbour, C(d⁺ - 1, k - 3) nodes at the counting
        # level, is walked by one group of that vertex's block, a block barrier per push: the
        # largest vertex's against one SM's even share of every vertex's
        j = max(k - 3, 0)
        chains = float(sum(int(c) * math.comb(d - 1, j) for d, c in enumerate(counts.tolist()) if c and d >= 1))
        d_max = int(len(counts) - 1)
        longest = math.comb(d_max - 1, j) if d_max >= 1 else 0
        share = longest / (chains / sms) if chains > 0 else 0.0
        return cls(k, n, float(out_degrees.mean()) if n else 0.0, d_max, total, sms, share)

    @property
    def skew(self) -> float:
        return self.max_out_degree / self.mean_out_degree if self.mean_out_degree > 0 else 0.0


def out_pair_density(indptr: np.ndarray, indices: np.ndarray, samples: int = KCLIQUE_PAIR_SAMPLES,
                     seed: int = 0) -> float:
    """The share of a vertex's out-neighbour pairs {u < w} that are an edge u → w of the oriented
    DAG (sorted out-lists, every edge from a lower to a higher id): oriented triangles over
    sum C(d⁺, 2), estimated from ``samples`` pairs drawn in proportion to C(d⁺, 2) per vertex, each
    looked up by a binary search in u's list (O(n + samples · log d⁺max): about 1 ms on 10⁶
    edges). 0.0 when no vertex has two out-neighbours. What the subset count cannot see: on a
    sparse random graph almost no subset is a clique (benchmarks/diag/kclique_density_fit.py)."""
    indptr = np.asarray(indptr, dtype=np.int64)
    dplus = np.diff(indptr)
    pairs = np.cumsum(dplus * (dplus - 1))                 # 2 C(d⁺, 2), running
    if len(pairs) == 0 or pairs[-1] <= 0:
        return 0.0
    v, _, lo, hi = sampled_out_positions(dplus, pairs, samples, np.random.default_rng(seed))
    u = indices[indptr[v] + lo]
    w = indices[indptr[v] + hi]                            # u < w: out-lists are sorted
    return float(out_list_contains(indptr, indices, u, w).mean())


def sampled_out_positions(dplus: np.ndarray, running: np.ndarray, samples: int, rng):
    """``samples`` vertices drawn in proportion to a weight (``running``: its running sums, the
    last positive) and two distinct positions ``lo < hi`` of each one's out-list (``dplus`` the
    out-degrees): ``(v, dplus[v], lo, hi)``."""
    v = np.searchsorted(running, np.sort(rng.integers(0, running[-1], samples)), side="right")
    d = dplus[v]
    i = (rng.random(samples) * d).astype(np.int64)
    j = (rng.random(samples) * (d - 1)).astype(np.int64)
    j += j >= i
    return v, d, np.minimum(i, j), np.maximum(i, j)


def out_list_contains(indptr: np.ndarray, indices: np.ndarray, u: np.ndarray, w: np.ndarray) -> np.ndarray:
    """For each pair, is ``w`` in ``u``'s sorted out-list? A vectorised binary search over all
    pairs at once (``indptr`` int64)."""
    lo, hi = indptr[u], indptr[u + 1]
    for _ in range(int(np.diff(indptr).max()).bit_length() + 1):
        active = lo < hi
        mid = (lo + hi) >> 1
        less = indices[np.minimum(mid, len(indices) - 1)] < w
        lo, hi = np.where(active & less, mid + 1, lo), np.where(active & ~less, mid, hi)
    return (lo < indptr[u + 1]) & (indices[np.minimum(lo, len(indices) - 1)] == w)


@dataclass(frozen=True)
class CliqueCounts:
    """What :func:`sampled_clique_counts` found: ``counts[j - 1]`` estimates the j-cliques of the
    graph for j = 1..k (j = 1, 2: the vertices and edges, exact); ``particles[j - 3]`` the cliques
    of j vertices the search followed, j = 3..k-1 (fewer than asked where the work cap cut a level,
    or none were left); ``capped``: the cap cut a level, so the deeper counts rest on fewer cliques."""

    counts: tuple[float, ...]
    particles: tuple[int, ...]
    capped: bool = False

    def per_edge(self, j: int) -> float:
        """Estimated j-cliques per edge (0.0 on a graph without edges)."""
        return self.counts[j - 1] / self.counts[1] if len(self.counts) >= j and self.counts[1] > 0 else 0.0


def sampled_clique_counts(indptr: np.ndarray, indices: np.ndarray, k: int,
                          particles: int = KCLIQUE_SEARCH_PARTICLES, max_pairs: int = KCLIQUE_SEARCH_PAIRS,
                          max_tests: int = KCLIQUE_SEARCH_TESTS, seed: int = 0) -> CliqueCounts:
    """How many j-cliques (j = 3..k) the oriented search meets, estimated by following a sample of
    its nodes level by level on the DAG (sorted out-lists, every edge from a lower to a higher id),
    with a fixed seed and a hard cap on the work.

    Level 3: out-neighbour pairs {u < w} of a vertex v drawn uniformly (in proportion to C(d⁺, 2) per
    vertex, as :func:`out_pair_density`, in rounds of 4,096 until ``particles`` are adjacent or
    ``max_pairs`` were drawn): triangles = sum C(d⁺, 2) x the adjacent share, and the adjacent pairs
    are a uniform sample of the triangles (v, u, w). Each level after: a followed clique's candidates
    (the out-neighbours of v after its last vertex that are out-neighbours of all its vertices, found
    by binary searches in the sorted lists) number its extensions, so (j+1)-cliques = j-cliques x their
    mean candidates; then ``particles`` cliques of j+1 vertices are drawn uniformly from the followed
    cliques' candidates (a clique in proportion to its candidates, one of them at random) and their
    candidates found among the parent's. A particle filter: each level's estimate rests on the sample
    of the level before, not on one vertex's whole subtree, so clustered graphs are seen as they are.

    The work: at most ``max_pairs`` pair look-ups and ``max_tests`` candidate look-ups per level (then
    fewer cliques, a random subset, are followed and ``capped`` is set: still an estimate of the
    whole, noisier, not a lower bound), each a vectorised binary search: 2-15 ms on the recorded
    graphs of up to 1.2·10⁶ edges at k = 7, about 30 ms on R-MAT 20 (8·10⁶ edges) on a 2-core machine
    (``benchmarks/diag/kclique_sampled_fit.py``). A level the sample finds empty counts 0 from there
    on (an estimate, not a proof: on 65,536 pairs a share of adjacent pairs under about 1/20,000
    reads 0). The counts up to j do not depend on the k asked for (the same draws, in order)."""
    k = int(k)
    indptr = np.asarray(indptr, dtype=np.int64)
    dplus = np.diff(indptr)
    n, m = len(dplus), int(len(indices))
    counts = [float(n), float(m)] + [0.0] * max(k - 2, 0)
    followed: list[int] = []
    running = np.cumsum(dplus * (dplus - 1))               # 2 C(d⁺, 2), running
    if k < 3 or len(running) == 0 or running[-1] <= 0:
        return CliqueCounts(tuple(counts[:max(k, 0)]), (0,) * max(k - 3, 0))
    rng = np.random.default_rng(seed)
    # level 3: uniform out-neighbour pairs; the adjacent ones are uniform triangles
    tri_v, tri_hi, tri_u, tri_w = [], [], [], []
    drawn = found = 0
    batch = KCLIQUE_PAIR_SAMPLES
    while drawn < max_pairs and found < particles:
        size = min(batch, max_pairs - drawn)
        v, _, lo, hi = sampled_out_positions(dplus, running, size, rng)
        u = indices[indptr[v] + lo]
        w = indices[indptr[v] + hi]
        hit = out_list_contains(indptr, indices, u, w)
        for kept, drawn_now in zip((tri_v, tri_hi, tri_u, tri_w), (v, hi, u, w), strict=True):
            kept.append(drawn_now[hit])
        drawn += size
        found += int(hit.sum())
        batch *= 2
    counts[2] = float(running[-1] // 2) * found / drawn
    v, hi, u, w = (np.concatenate(a) for a in (tri_v, tri_hi, tri_u, tri_w))
    order = rng.permutation(len(v))[:particles]            # a uniform subset, in random order
    v, hi, u, w = v[order], hi[order], u[order], w[order]
    capped = False
    if k == 3 or len(v) == 0:
        return CliqueCounts(tuple(counts), (0,) * (k - 3))
    # the triangles' candidates: v's out-neighbours after w, out-neighbours of u and of w
    lengths = dplus[v] - hi - 1
    keep = _within(lengths, max_tests // 2)
    capped |= keep < len(v)
    v, hi, u, w, lengths = v[:keep], hi[:keep], u[:keep], w[:keep], lengths[:keep]
    followed.append(keep)
    owner, flat = _spans(indptr[v] + hi + 1, lengths)
    cand = indices[flat]
    ok = out_list_contains(indptr, indices, u[owner], cand)
    owner, cand = owner[ok], cand[ok]
    ok = out_list_contains(indptr, indices, w[owner], cand)
    owner, cand = owner[ok], cand[ok]
    sizes = np.bincount(owner, minlength=keep)
    counts[3] = counts[2] * float(sizes.mean())
    for j in range(4, k):
        # (j+1)-cliques from the followed j-cliques: draw candidates uniformly (a clique in
        # proportion to its candidates), each a new clique; its candidates: the parent's after it
        # that are its out-neighbours
        total = int(sizes.sum())
        if total == 0:
            followed.append(0)
            break
        ends = np.cumsum(sizes)                            # cand is grouped by owner, sorted within
        pick = rng.integers(0, total, particles)
        x = cand[pick]
        lengths = ends[owner[pick]] - pick - 1
        keep = _within(lengths, max_tests)
        capped |= keep < len(pick)
        pick, x, lengths = pick[:keep], x[:keep], lengths[:keep]
        followed.append(keep)
        new_owner, flat = _spans(pick + 1, lengths)
        new_cand = cand[flat]
        ok = out_list_contains(indptr, indices, x[new_owner], new_cand)
        owner, cand = new_owner[ok], new_cand[ok]
        sizes = np.bincount(owner, minlength=keep)
        counts[j] = counts[j - 1] * float(sizes.mean())
    return CliqueCounts(tuple(counts), tuple(followed + [0] * (k - 3 - len(followed))), capped)


def _within(lengths: np.ndarray, budget: int) -> int:
    """How many of the first entries of ``lengths`` fit ``budget`` together (at least one)."""
    return max(1, int(np.searchsorted(np.cumsum(lengths), budget, side="right"))) if len(lengths) else 0


def _spans(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions ``starts[i] .. starts[i] + lengths[i] - 1`` of every i, flat, and each one's i."""
    owner = np.repeat(np.arange(len(lengths)), lengths)
    first = np.cumsum(lengths) - lengths
    return owner, np.arange(int(lengths.sum()), dtype=np.int64) - first[owner] + starts[owner]


def kclique_work(search: CliqueSearch, *, sparse_pairs: float = KCLIQUE_SPARSE_PAIRS,
                 k4_long_lists: float = KCLIQUE_K4_LONG_LISTS, k4_few_cliques: float = KCLIQUE_K4_FEW_CLIQUES,
                 dying: float = KCLIQUE_DYING, long_lists: float = KCLIQUE_LONG_LISTS,
                 deep: float = KCLIQUE_DEEP, deep_k: int = KCLIQUE_DEEP_K) -> AutoChoice:
    """``vertex`` (a block per vertex, binary-encoded), ``edge`` (a block per oriented edge) or
    ``list`` (a block per vertex, sorted-list intersections), from the search the input implies
    at this k (:class:`CliqueSearch`). Fitted on an H100 over 29 real and generated graphs of at
    least 2,000 edges at k = 4..7 (``benchmarks/bench_kclique_auto.py``), revised on two checks of
    unseen graphs (``benchmarks/diag/kclique_density_fit.py``), then given the depth of the search
    after a third (all 250 cases measured; ``benchmarks/diag/kclique_sampled_fit.py``; the numbers
    are in docs/defaults.md), then given the long-list guard and the deep override after a fourth
    (rule (d'): 319 of the 326 measured cases within 10 %, worst 1.38x, in sample; a fifth check,
    ``--check5``, is its test). The keyword arguments are the thresholds, for those scripts' refits:

    * meshes (d⁺max <= 8) at k = 4: ``list`` from 5·10⁴ subsets in all (merging short sorted lists
      beats bitmaps and three times as many edge blocks), else ``edge``;
    * any k: ``list`` where under 10 % of the out-neighbour pairs are adjacent (``pair_density``,
      :func:`out_pair_density`) on a graph that is not a mesh: a sparse random-like graph has few
      cliques, and sorted lists prune at the first intersection -- except at k = 4 where the
      out-lists are long (mean d⁺ >= 16: one level of bitmap AND + popc costs less than merging
      them, and the k = 4 rules below decide), at k >= 5 from a mean d⁺ of 48 (``long_lists``: the
      same at deeper levels, and the rules below decide), and at k >= 6 (``deep_k``) where the search
      finds at least 0.02 k-cliques per edge (``deep``: the cliques persist on skewed out-degrees,
      Chung-Lu exponent 2.5, whatever the share of adjacent pairs; the rules below decide);
    * k = 4 (one level of AND + popc): ``vertex`` from 5·10⁵ subsets in all (a vertex's bitmap is
      encoded once and shared by its d⁺ edges) -- but ``list`` where the out-lists are short (mean
      d⁺ < 16) and the search finds under 2 4-cliques per edge (``cliques_per_edge``,
      :func:`sampled_clique_counts`): then building the bitmaps is most of the work; else ``edge``
      (a small search is launch-bound, and edge blocks have the least setup);
    * k >= 5: ``list`` on meshes; ``vertex`` below 7·10³ subsets in all (launch-bound: the fewest,
      cheapest blocks); ``list`` where the search dies out, under 0.02 k-cliques per edge
      (``cliques_per_edge``; not from a mean d⁺ of 48): the list kernel pushes a level
      only when enough candidates are left to finish a clique, the bitmap kernels push every
      prefix, a block barrier each;
      ``vertex`` on uniform out-degrees (d⁺max < 2x the mean: no block waits for a larger one, and
      with the pairs this dense the search goes deep, where a bitmap AND beats a list merge: the
      27-point stencil); ``edge`` at k >= 6 (two or more block barriers per subtree: a block per
      edge keeps more groups busy) and at k = 5 where the largest vertex's longest subtree is >= 0.3
      of an SM's share (a block per vertex would leave the GPU waiting for it); else ``vertex``.

    Without ``cliques_per_edge`` (None) the depth branches (and the deep override) are skipped."""
    s = search
    facts = (f"k={s.k}, d⁺max {s.max_out_degree}, mean out-degree {s.mean_out_degree:.1f}, "
             f"{s.total_search:.3g} subsets of k-1 out-neighbours in all")
    shallow = s.max_out_degree <= KCLIQUE_SHALLOW
    if shallow and s.k <= 4:
        if s.total_search >= KCLIQUE_MESH_SEARCH:
            return AutoChoice("list", f"{facts}: k <= 4 on a large mesh (d⁺max <= {KCLIQUE_SHALLOW}) "
                                      "→ sorted lists (gpu-list)")
        return AutoChoice("edge", f"{facts}: k <= 4 on a small mesh: edge blocks have the least setup → edge-centric")
    cpe = s.cliques_per_edge
    depth = f"{cpe:.3g} sampled {s.k}-cliques per edge" if cpe is not None else ""
    pairs = f"{s.pair_density:.3f} of out-neighbour pairs adjacent"
    # the deep override: sparse pairs, but a search that keeps finding cliques (Python bools: they
    # multiply a list below)
    persists = bool(not shallow and s.pair_density < sparse_pairs and s.k >= deep_k
                    and cpe is not None and cpe >= deep)
    sparse = bool(not shallow and s.pair_density < sparse_pairs and not persists)
    deep_said = (f"{pairs} (< {sparse_pairs:g}) but {depth} (>= {deep:g} at k >= {deep_k}): the cliques "
                 "persist, so not sorted lists for sparse pairs; " if persists else "")
    long_k = s.k >= 5 and s.mean_out_degree >= long_lists
    lists = (f"out-lists of {s.mean_out_degree:.1f} on average (>= {k4_long_lists if s.k <= 4 else long_lists:g}): "
             "merging them costs more than bitmaps")
    if sparse and not (s.k <= 4 and s.mean_out_degree >= k4_long_lists) and not long_k:
        return AutoChoice("list", f"{facts}: {pairs} (< {sparse_pairs:g}): few cliques, sorted lists prune at "
                                  "the first intersection → sorted lists (gpu-list)")
    if s.k <= 4:
        # a sparse graph here has long out-lists: said, then the k = 4 rules
        long = f"{pairs} (< {sparse_pairs:g}) but {lists}; " if sparse else ""
        if s.total_search >= KCLIQUE_K4_SEARCH:
            if s.k == 4 and cpe is not None and s.mean_out_degree < k4_long_lists and cpe < k4_few_cliques:
                return AutoChoice("list", f"{facts}: k = 4 with short out-lists (mean < {k4_long_lists:g}) and "
                                          f"{depth} (< {k4_few_cliques:g}): building the bitmaps would be most of "
                                          "the work → sorted lists (gpu-list)")
            return AutoChoice("vertex", f"{facts}: {long}k <= 4 with a real search (>= {KCLIQUE_K4_SEARCH:.0e}): "
                                        "a bitmap per vertex, encoded once for its edges → vertex-centric")
        return AutoChoice("edge", f"{facts}: {long}k <= 4 with a small search: edge blocks have the least setup "
                                  "→ edge-centric")
    if shallow:
        return AutoChoice("list", f"{facts}: shallow out-neighbourhoods (<= {KCLIQUE_SHALLOW}), a little search "
                                  "each → sorted lists (gpu-list)")
    dies = bool(cpe is not None and cpe < dying)
    # what would have sent it to sorted lists, overruled by long out-lists (here only where long_k)
    overruled = [f"{pairs} (< {sparse_pairs:g})"] * sparse + [f"the search dies out ({depth} < {dying:g})"] * dies
    long = deep_said + (f"{' and '.join(overruled)}, but {lists}; " if overruled and long_k else "")
    if s.total_search < KCLIQUE_TINY_SEARCH:
        return AutoChoice("vertex", f"{facts}: {long}a search this small is launch-bound: the fewest blocks "
                                    "→ vertex-centric")
    if dies and not long_k:
        return AutoChoice("list", f"{facts}: the search dies out, {depth} (< {dying:g}): sorted lists push a "
                                  "level only with enough candidates left to finish a clique → sorted lists "
                                  "(gpu-list)")
    if s.skew < KCLIQUE_SKEW:
        return AutoChoice("vertex", f"{facts}: {long}uniform out-degrees (d⁺max < {KCLIQUE_SKEW:g}x the mean) and "
                                    f"{pairs}: no block waits for a larger one, and a deep "
                                    "search is cheaper on bitmaps → vertex-centric")
    if s.k >= 6:
        return AutoChoice("edge", f"{facts}: {long}k >= 6 on skewed out-degrees: a block barrier per push, more "
                                  "groups busy with a block per edge → edge-centric")
    if s.longest_subtree_share >= KCLIQUE_TAIL5:
        return AutoChoice("edge", f"{facts}: {long}the largest vertex's longest subtree is "
                                  f"{s.longest_subtree_share:.2f} of an SM's share of all of them "
                                  f"(>= {KCLIQUE_TAIL5:g}) → edge-centric")
    return AutoChoice("vertex", f"{facts}: {long}the search is spread over the vertices → vertex-centric")


def kclique_group_size(k: int, work: str) -> AutoChoice:
    """Threads per group: 1 (a candidate row of up to 32 out-neighbours is one 32-bit word, so
    wider groups only idle), except edge-centric at k >= 6, where every push is a block barrier
    and 4-thread groups (fewer groups meeting at each barrier) measured best, and ``list``, which
    keeps ``gpu-list``'s 8 (the lanes of a group share a merge)."""
    if work == "list":
        return AutoChoice(8, "sorted lists: gpu-list's 8 threads per group")
    if work == "edge" and k >= 6:
        return AutoChoice(4, "edge-centric at k >= 6: fewer groups per block barrier → 4")
    return AutoChoice(1, f"{work}-centric at k={k}: one-word candidate rows → 1 thread per group")


def kclique_work_rule(problem: Problem, params: dict, target: str) -> AutoChoice:
    """:func:`kclique_work` on the features of the prepared input (rule (d′), docs/defaults.md).
    On a real GPU the family measures instead (``kernels.algorithms.kclique.trial``); this rule
    decides on the simulator, the CPU and in compile-ahead processes."""
    from kernels.cuda.device import NOMINAL, multiprocessors
    from kernels.measure.targets import needs_gpu

    # the SMs of the GPU it runs on; elsewhere (simulator, a CPU-only ``info``) the nominal H100's
    sms = multiprocessors() if needs_gpu(target) else NOMINAL.multiprocessors
    dag = problem.data["oriented"]
    k = int(params["k"])
    search = dataclasses.replace(CliqueSearch.of(np.diff(dag.indptr), k, sms),
                                 pair_density=out_pair_density(dag.indptr, dag.indices),
                                 cliques_per_edge=sampled_clique_counts(dag.indptr, dag.indices, k).per_edge(k))
    return kclique_work(search)


def kclique_group_rule(work: str | None):
    """The ``group_size`` rule of ``gpu-vertex`` / ``gpu-edge`` (``work`` given) or of ``gpu``
    (``work=None``: the value its ``work`` parameter resolved to)."""
    def rule(problem: Problem, params: dict, target: str) -> AutoChoice:
        return kclique_group_size(int(params["k"]), work or params["work"])
    return rule


# ---- slotted pages: words per page ---------------------------------------------------------

def slotted_page_size_rule(problem: Problem, params: dict, target: str) -> AutoChoice:
    """The page size ``info``, ``pages``, ``dynamic`` and the GUI choose for the same graph
    (:func:`kernels.graph.page_size.page_size_for`), so that ``run`` builds the structure they
    describe (docs/slotted.md)."""
    from kernels.graph.page_size import PAGE_SIZE_DEFAULT_TEXT, page_size_for

    return AutoChoice(page_size_for(problem.graph), f"{problem.graph.nnz:,} stored entries; {PAGE_SIZE_DEFAULT_TEXT}")


# ---- bfs gpu-do: the switching thresholds ---------------------------------------------------

#: Beamer, Asanović and Patterson (SC'12): top-down -> bottom-up when the frontier's edges exceed
#: 1/alpha of the unexplored vertices' edges; back when the frontier is under 1/beta of the vertices.
#: Their CPU values; the kernel's defaults where no rule ran (the rule's own values are below)
BEAMER_ALPHA = 14.0
BEAMER_BETA = 24.0
#: stored entries per level of the source's BFS tree under which a level costs its latency (grid
#: syncs, a few microseconds) more than its work: the same feature as the delta rule below
LEVEL_WORK = 1 << 18
#: fitted on the alpha x beta sweeps of benchmarks/bench_traversal_auto.py (H100; docs/defaults.md)
DO_ALPHA = 8.0
DO_ALPHA_SHALLOW_WORK = 2.0
DO_BETA = 96.0
#: a source that leaves more than this share of the vertices with edges unreached: every bottom-up
#: step scans the unreachable vertices' whole lists again (they never find a parent)
DO_UNREACHED_SHARE = 0.02
DO_BETA_UNREACHED = 3.0


def bfs_direction_thresholds(directed: bool, *, entries: int, hop_eccentricity: int, reached: int,
                             with_edges: int) -> tuple[AutoChoice, AutoChoice]:
    """``(alpha, beta)`` from the work a level holds and the share of the graph the source reaches.

    Fitted on 7 x 9 sweeps of 20 graphs (R-MAT 15-22, Chung-Lu, G(n, m), Delaunay, grids, five
    real graphs; docs/defaults.md). A GPU's bottom-up step is cheap next to a top-down step over a
    big frontier, so it pays to stay bottom-up until the frontier holds under 1/96 of the vertices
    (Beamer's CPU value, 1/24, returned too early: up to 8 % slower on the large graphs) and to go
    bottom-up at 1/8 of the unexplored edges. Where a level of the source's BFS holds under 2^18
    stored entries on average (the whole graph's entries over the source's BFS depth: meshes,
    road-like and small graphs), a step costs its latency, and a bottom-up step's is the larger
    (every unsettled word scanned, two grid syncs at each switch): bottom-up only at half of the
    unexplored edges (alpha 2). Where the source leaves over 2 % of the vertices with edges
    unreached, each bottom-up step scans those vertices' whole lists again, so the return to
    top-down comes at 1/3. A directed input runs top-down only (no in-neighbour
    lists), so there the values are unused."""
    if directed:
        why = "directed input: top-down only, the threshold is unused"
        return AutoChoice(DO_ALPHA, why), AutoChoice(DO_BETA, why)
    per_level = entries / max(int(hop_eccentricity), 1)
    work = (f"{per_level:,.0f} stored entries per level of the source's BFS ({entries:,} / depth "
            f"{hop_eccentricity})")
    if per_level < LEVEL_WORK:
        alpha = AutoChoice(DO_ALPHA_SHALLOW_WORK,
                           f"{work}, under {LEVEL_WORK:,}: a step costs its latency, so bottom-up only once the "
                           f"frontier's edges exceed 1/{DO_ALPHA_SHALLOW_WORK:g} of the unexplored edges")
    else:
        alpha = AutoChoice(DO_ALPHA, f"{work}, over {LEVEL_WORK:,}: bottom-up once the frontier's edges exceed "
                                     f"1/{DO_ALPHA:g} of the unexplored edges (fitted, docs/defaults.md)")
    unreached = max(with_edges - reached, 0)
    if with_edges and unreached > DO_UNREACHED_SHARE * with_edges:
        beta = AutoChoice(DO_BETA_UNREACHED, f"the source leaves {unreached:,} of {with_edges:,} vertices with edges "
                                             f"unreached (each bottom-up step scans them again): back to top-down "
                                             f"once the frontier holds under 1/{DO_BETA_UNREACHED:g} of the vertices")
    else:
        beta = AutoChoice(DO_BETA, f"the source reaches {reached:,} of {with_edges:,} vertices with edges: back to "
                                   f"top-down once the frontier holds under 1/{DO_BETA:g} of the vertices "
                                   f"(fitted, docs/defaults.md)")
    return alpha, beta


def _direction_thresholds(problem: Problem) -> tuple[AutoChoice, AutoChoice]:
    g = problem.data["graph"]
    return bfs_direction_thresholds(bool(g.directed), entries=int(g.nnz),
                                    hop_eccentricity=problem.data["hop_eccentricity"],
                                    reached=int(problem.size["reached"]),
                                    with_edges=int(np.count_nonzero(np.diff(g.indptr))))


def bfs_alpha_rule(problem: Problem, params: dict, target: str) -> AutoChoice:
    return _direction_thresholds(problem)[0]


def bfs_beta_rule(problem: Problem, params: dict, target: str) -> AutoChoice:
    return _direction_thresholds(problem)[1]


# ---- sssp gpu-nearfar: the bucket width delta ---------------------------------------------

#: bucket widths in mean positive weights, fitted on the delta sweeps (docs/defaults.md)
DELTA_WIDE = 64.0
DELTA_NARROW = 0.5


def sssp_delta(weights: np.ndarray, entries: int, hop_eccentricity: int) -> AutoChoice:
    """``delta`` in mean positive weights, by which of a traversal's two costs dominates.

    A near-far level costs a fixed few microseconds (grid syncs) plus its relaxations; a wider
    bucket means fewer levels but more relaxations (a vertex improved several times in one
    bucket). The input's *entries per BFS level from the source* (stored entries / hop
    eccentricity) says which matters (a level's fixed cost, about 8 µs on an H100, is that of
    relaxing some 10^5 edges): under 2^18 (meshes, road-like and small graphs: hundreds to
    thousands of levels, little work in each) a bucket spans 64 mean weights; above it
    (power-law and random graphs: a handful of levels, millions of edges) half a mean weight, so
    that each vertex is relaxed about once. Fitted on delta sweeps of 21 graphs (docs/defaults.md).
    Zero weights only: 1 (every distance is 0, one bucket)."""
    w = np.asarray(weights, dtype=np.float64)
    positive = w[w > 0]
    if len(positive) == 0:
        return AutoChoice(1.0, "no positive weight: every distance is 0, one bucket")
    mean_w = float(positive.mean())
    per_level = entries / max(int(hop_eccentricity), 1)
    wide = per_level < LEVEL_WORK
    factor = DELTA_WIDE if wide else DELTA_NARROW
    why = ("levels dominate: wide buckets" if wide else "relaxations dominate: narrow buckets")
    return AutoChoice(float(f"{mean_w * factor:.4g}"),
                      f"{factor:g} x the mean positive weight {mean_w:.3g}: {per_level:,.0f} stored entries per "
                      f"level of the source's BFS ({entries:,} / depth {hop_eccentricity}), "
                      f"{'under' if wide else 'over'} {LEVEL_WORK:,}: {why}")


def sssp_delta_rule(problem: Problem, params: dict, target: str) -> AutoChoice:
    return sssp_delta(problem.data["weights"], int(problem.data["graph"].nnz), problem.data["hop_eccentricity"])


# ---- sssp gpu-nearfar: block-local hops ------------------------------------------------------

#: rounds a block relaxes its own improvements before the grid's next level, by the hop depth of
#: the source's BFS (H200 sweeps of 10 graphs, docs/defaults.md): under HOPS_SHALLOW_DEPTH levels
#: 0 (a handful of levels: the rounds only add work), from HOPS_DEEP_DEPTH on HOPS_DEEP, between
#: them HOPS_MID
HOPS_SHALLOW_DEPTH = 20
HOPS_DEEP_DEPTH = 400
HOPS_MID = 4
HOPS_DEEP = 16


def sssp_hops(entries: int, hop_eccentricity: int) -> AutoChoice:
    """``hops``: block-local rounds a level, by how many levels the traversal will take (the hop
    depth of the source's BFS). Shallow graphs (under :data:`HOPS_SHALLOW_DEPTH` levels: social,
    power-law, dense finite-element matrices) and graphs whose levels hold at least
    :data:`LEVEL_WORK` entries get 0, the level-synchronous near-far; meshes and road-like graphs
    :data:`HOPS_MID`, and :data:`HOPS_DEEP` from :data:`HOPS_DEEP_DEPTH` levels on, where a
    level's latency is paid over a thousand times."""
    depth = max(int(hop_eccentricity), 1)
    per_level = entries / depth
    if per_level >= LEVEL_WORK:
        return AutoChoice(0, f"{per_level:,.0f} stored entries per level of the source's BFS, over "
                             f"{LEVEL_WORK:,}: a few heavy levels, each hop a grid-wide level")
    if depth < HOPS_SHALLOW_DEPTH:
        return AutoChoice(0, f"the source's BFS is {depth} levels deep, under {HOPS_SHALLOW_DEPTH}: block-local "
                             "rounds would only add work")
    hops = HOPS_DEEP if depth >= HOPS_DEEP_DEPTH else HOPS_MID
    return AutoChoice(hops, f"the source's BFS is {depth} levels deep ({per_level:,.0f} stored entries a level): "
                            f"a block follows its own improvements up to {hops} rounds a level")


def sssp_hops_rule(problem: Problem, params: dict, target: str) -> AutoChoice:
    return sssp_hops(int(problem.data["graph"].nnz), problem.data["hop_eccentricity"])
