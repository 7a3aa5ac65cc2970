"""A counter-based random stream for the parallel numba loops of the generators.

``numpy.random.Generator`` cannot be called from numba ``prange`` loops, and drawing every
random number up front costs memory and a full pass per array (R-MAT at scale 23 needs
3 x 10^9 random draws). SplitMix64 is a counter generator: output *i* of the stream with
seed ``s`` is ``mix(s + (i + 1) * GOLDEN)``, so any thread can compute draw *i* directly and
the result does not depend on the number of threads. Its output passes BigCrush. The seed
(``salt``) of each stream is drawn from the caller's ``numpy.random.default_rng(seed)``,
so everything stays reproducible from the one user-visible seed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV_2_53 = 1.0 / 9007199254740992.0


def draw_salt(rng: np.random.Generator) -> np.uint64:
    """A stream seed taken from a NumPy generator (so the user's seed decides it)."""
    return np.uint64(rng.integers(0, 2**63, dtype=np.int64))


@njit(inline="always", nogil=True)
def mix64(z):
    """The SplitMix64 finaliser: a bijective scramble of 64 bits."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(inline="always", nogil=True)
def draw64(salt, counter):
    """Draw number ``counter`` of the stream ``salt`` (64 random bits)."""
    return mix64(salt + (np.uint64(counter) + np.uint64(1)) * GOLDEN)


@njit(inline="always", nogil=True)
def to_unit53(bits):
    """64 random bits -> a float in [0, 1) with 53 random bits."""
    return float(bits >> _S11) * _INV_2_53

