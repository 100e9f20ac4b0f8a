"""Shared helpers of the Gymnasium environment tests: the registered ids, episodes run with a policy, and
observation comparisons."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[3]
IDS = ("mvsim/GoalReaching-v0", "mvsim/GoalReachingAckermann-v0")


def episode(env: Any, seed: int, policy: Callable[[Any], Any]) -> dict[str, Any]:
    """Run one episode from ``reset(seed=seed)`` with ``policy(obs)``; its last info, with ``steps`` and ``return``."""
    obs, info = env.reset(seed=seed)
    steps, total = 0, 0.0
    while True:
        obs, reward, terminated, truncated, info = env.step(policy(obs))
        steps += 1
        total += float(reward)
        if terminated or truncated:
            return {**info, "steps": steps, "return": total, "terminated": terminated, "truncated": truncated}


def same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Whether two observation dicts hold the same keys and bit-identical arrays."""
    return a.keys() == b.keys() and all(a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a)
