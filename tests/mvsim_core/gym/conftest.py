"""Fixtures of the Gymnasium environment tests (skipped without the ``gym`` extra: gymnasium, pettingzoo)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

import gymnasium as gym  # noqa: E402
from gym_checks import IDS  # noqa: E402

import mvsim_core  # noqa: E402, F401  (registers the ids)


@pytest.fixture
def make() -> Iterator[Callable[..., Any]]:
    """``make(id, **kwargs)``: ``gymnasium.make``, every environment closed after the test."""
    made: list[Any] = []

    def _make(env_id: str = IDS[0], **kwargs: Any) -> Any:
        env = gym.make(env_id, **kwargs)
        made.append(env)
        return env

    yield _make
    for env in made:
        env.close()
