"""Helpers for the dynamics tests: XML nodes read from a temporary file, and the shipped vehicle definitions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.parser import parse_text
from mvsim_core.xml.substitution import substitute_text


@pytest.fixture
def xml_file(tmp_path: Path) -> str:
    """The file the nodes of ``xml_node`` are read from (errors point here)."""
    return str(tmp_path / "x.xml")


@pytest.fixture
def xml_node(xml_file: str) -> Callable[[str], XmlNode]:
    """``xml_node(text)``: the first root element of ``text``, read as ``xml_file``."""
    return lambda text: parse_text(text, file=xml_file)[0]


def _vehicle_classes(path: Path) -> Iterator[tuple[str, XmlNode]]:
    text = substitute_text(path.read_text(), {"MVSIM_CURRENT_FILE_DIRECTORY": str(path.parent)}, env={})
    for root in parse_text(text, file=str(path)):
        dyn = root.child("dynamics")
        assert dyn is not None, f"{path.name}: <{root.tag}> without <dynamics>"
        yield dyn.attrs["class"], root


@pytest.fixture
def vehicle_classes() -> Callable[[Path], Iterator[tuple[str, XmlNode]]]:
    """``vehicle_classes(path)``: (dynamics class, ``<vehicle:class>`` node) for each vehicle class of a definition
    file, text-substituted as an ``<include>`` would do it."""
    return _vehicle_classes
