"""Helpers for the sensor tests: build a sensor from XML text, or from a shipped definition file included the way
``<include file="..." attr="..."/>`` does (text substitution with the attributes, then parsing)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import mvsim_core.sensors.base as sensor_base
from mvsim_core.objects.visual import Visual
from mvsim_core.sensors import Sensor, sensor_from_xml
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.parser import parse_text
from mvsim_core.xml.substitution import substitute_text

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
PROJECT_DEFINITIONS = Path(__file__).resolve().parents[3] / "worlds" / "definitions"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared reference data (``/work/shared``)."""
    if not SHARED.is_dir():
        pytest.skip(f"shared data not available at {SHARED}")
    return SHARED


@pytest.fixture
def defs_dir(shared_dir: Path) -> Path:
    """Upstream's ``definitions/`` directory (sensor and vehicle include files)."""
    return shared_dir / "worlds" / "definitions"


def fake_parse_visuals(node: XmlNode, ctx: ParseContext, *, extra: dict[str, str] | None = None,
                       scale_override: float | None = None) -> list[Visual]:
    """Test double of ``parse_visuals``: resolves ``enabled`` and ``model_uri`` but loads no model (no disk, no
    network: ``rplidar-a2.sensor.xml`` names a remote URI)."""
    out = []
    for c in node.children_named("visual"):
        if (ctx.attr(c, "enabled", "true", extra=extra) or "").lower() in ("false", "0"):
            continue
        uri_node = c.child("model_uri")
        uri = ctx.text(uri_node, extra=extra) if uri_node is not None else ""
        out.append(Visual(uri=uri, path=None, params={}, node=c))
    return out


@pytest.fixture
def no_model_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sensors built in this test record their ``<visual>``s without loading the models."""
    monkeypatch.setattr(sensor_base, "parse_visuals", fake_parse_visuals)


@pytest.fixture
def make_sensor(tmp_path: Path) -> Callable[..., tuple[Sensor, ParseContext]]:
    """``make_sensor(xml, parent="r1", ctx=None) -> (sensor, ctx)``; the text is read as ``tmp_path/x.xml``."""

    def _make(xml: str, parent: str = "r1", ctx: ParseContext | None = None) -> tuple[Sensor, ParseContext]:
        ctx = ctx if ctx is not None else ParseContext(env={})
        node = parse_text(xml, file=str(tmp_path / "x.xml"))[0]
        return sensor_from_xml(node, ctx, parent), ctx

    return _make


@pytest.fixture
def xml_file(tmp_path: Path) -> str:
    """The file name errors of ``make_sensor`` point at."""
    return str(tmp_path / "x.xml")


def include_definition(path: Path, parent: str = "r1", ctx: ParseContext | None = None,
                       **attrs: str) -> tuple[Sensor, ParseContext]:
    """Build the sensor of a definition file as ``<include file=path attr=value .../>`` inside vehicle ``parent``."""
    ctx = ctx if ctx is not None else ParseContext(env={})
    variables = {**ctx.variables, "MVSIM_CURRENT_FILE_DIRECTORY": str(path.parent), **attrs}
    text = substitute_text(path.read_text(), variables, env={})
    roots = parse_text(text, file=str(path))
    assert len(roots) == 1, f"{path.name}: expected one <sensor> root"
    return sensor_from_xml(roots[0], ctx, parent), ctx


@pytest.fixture
def include_file(no_model_loading: None) -> Callable[..., tuple[Sensor, ParseContext]]:
    """``include_file(path, parent="r1", ctx=None, **include_attrs) -> (sensor, ctx)`` (see include_definition)."""
    return include_definition


@pytest.fixture
def load_definition(defs_dir: Path, no_model_loading: None) -> Callable[..., tuple[Sensor, ParseContext]]:
    """``load_definition("lidar2d.sensor.xml", parent="r1", ctx=None, **include_attrs) -> (sensor, ctx)``."""

    def _load(name: str, parent: str = "r1", ctx: ParseContext | None = None, **attrs: str):
        return include_definition(defs_dir / name, parent, ctx, **attrs)

    return _load
