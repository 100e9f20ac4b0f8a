"""The world's seeded random generator.

Every random draw in a simulation (``$f{rand()}`` in world files, odometry noise, sensor noise) comes from one
:class:`WorldRandom`, so the same seed gives the same world and the same run.
"""

from __future__ import annotations

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

    def uniform(self, low: float = 0.0, high: float = 1.0) -> float:
        """One draw from U(low, high)."""
        return float(self.generator.uniform(low, high))

    def normal(self, mean: float = 0.0, std: float = 1.0) -> float:
        """One draw from N(mean, std²)."""
        return float(self.generator.normal(mean, std))
