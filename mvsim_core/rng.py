"""The world's seeded random generator.

Every random draw in a simulation (``$f{rand()}`` in world files, odometry noise, sensor noise) comes from one
:class:`WorldRandom`, so the same seed gives the same world and the same run. Each sensor draws from a stream of its
own (:meth:`WorldRandom.stream`), so that sampling one sensor or not never shifts another's draws.
"""

from __future__ import annotations

import hashlib

import numpy as np


class WorldRandom:
    """A reseedable wrapper around :class:`numpy.random.Generator` (PCG64).

    Args:
        seed: non-negative integer seed.
    """

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)
        self.generator = np.random.Generator(np.random.PCG64(self.seed))

    def reseed(self, seed: int) -> None:
        """Restart the sequence from ``seed`` (what ``$f{randomize(seed)}`` does)."""
        self.seed = int(seed)
        self.generator = np.random.Generator(np.random.PCG64(self.seed))

    def stream(self, key: str) -> np.random.Generator:
        """A generator of its own for ``key`` (a sensor's ``parent/name``), from this world's seed and the key alone:
        the same seed and key give the same draws, whatever else draws, and different keys independent ones
        (numpy's ``SeedSequence`` with the key's 64-bit BLAKE2 hash as spawn key)."""
        h = int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little")
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence(self.seed, spawn_key=(h,))))

    def uniform(self, low: float = 0.0, high: float = 1.0) -> float:
        """One draw from U(low, high)."""
        return float(self.generator.uniform(low, high))

    def normal(self, mean: float = 0.0, std: float = 1.0) -> float:
        """One draw from N(mean, std²)."""
        return float(self.generator.normal(mean, std))
