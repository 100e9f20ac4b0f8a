"""Shared fixtures: the ../shared folder beside the checkout (upstream worlds, reference data)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))

# tests never reach the network for remote models
os.environ.setdefault("MVSIM_OFFLINE", "1")


@pytest.fixture(scope="session")
def repo_dir() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"shared data folder not found at {SHARED}; CI must provide ../shared")
        pytest.skip(f"shared data folder not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def worlds_dir(shared_dir: Path) -> Path:
    return shared_dir / "worlds"
