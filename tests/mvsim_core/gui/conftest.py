"""Fixtures of the viewer tests: the viewer test world (offscreen GL and the Xvfb display: tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def viewer_world_file() -> Path:
    return DATA / "viewer.world.xml"
