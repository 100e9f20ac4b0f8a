"""Helpers for the mvsim_core tests: load a world written into ``tmp_path``, or parse XML text into nodes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.parser import parse_text

HEADER = '<mvsim_world version="1.0">\n'  # the body given to ``load`` starts at line 2


@pytest.fixture
def load(tmp_path: Path) -> Callable[..., mv.World]:
    """``load(body, seed=0)``: the world ``<mvsim_world>body</mvsim_world>`` written as ``tmp_path/w.xml``."""

    def _load(body: str, *, seed: int = 0) -> mv.World:
        (tmp_path / "w.xml").write_text(f"{HEADER}{body}\n</mvsim_world>\n")
        return mv.load_world(tmp_path / "w.xml", seed=seed)

    return _load


@pytest.fixture
def nodes(tmp_path: Path) -> Callable[[str], list[XmlNode]]:
    """``nodes(text)``: the root elements of ``text``, as if read from ``tmp_path/w.xml`` (line 1 = first line)."""
    return lambda text: parse_text(text, file=str(tmp_path / "w.xml"))
