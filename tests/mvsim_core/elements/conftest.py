"""Helpers for the world-element tests: build an element (or walls) from XML text written in a temporary world."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mvsim_core.elements import element_from_xml, parse_walls
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.parser import parse_text


def node_from(text: str, tmp_path: Path) -> XmlNode:
    """The first root node of ``text``, as if read from ``tmp_path/w.xml``."""
    return parse_text(text, file=str(tmp_path / "w.xml"))[0]


@pytest.fixture
def xml_node(tmp_path: Path) -> Callable[[str], XmlNode]:
    """``xml_node(text)``: the first root node of ``text`` read as ``tmp_path/w.xml``."""
    return lambda text: node_from(text, tmp_path)


@pytest.fixture
def build(tmp_path: Path) -> Callable:
    """``build(text) -> (element, ctx)`` for an ``<element>`` written in ``tmp_path/w.xml``."""

    def _build(text: str, ctx: ParseContext | None = None):
        ctx = ctx or ParseContext()
        return element_from_xml(node_from(text, tmp_path), ctx), ctx

    return _build


@pytest.fixture
def build_walls(tmp_path: Path) -> Callable:
    """``build_walls(text, ctx=None) -> (segments, ctx)`` for a ``<walls>`` written in ``tmp_path/w.xml``."""

    def _build(text: str, ctx: ParseContext | None = None):
        ctx = ctx or ParseContext()
        return parse_walls(node_from(text, tmp_path), ctx), ctx

    return _build
