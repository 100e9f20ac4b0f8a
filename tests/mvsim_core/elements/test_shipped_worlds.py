"""Every <element> and <walls> of the shipped upstream worlds loads, with no warning except missing remote assets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mvsim_core.elements import WorldElement, element_from_xml, parse_walls
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.flow import Walker
from mvsim_core.xml.parser import parse_file

SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", Path(__file__).resolve().parents[3].parent / "shared"))
WORLDS = sorted([*SHARED.glob("worlds/mvsim_tutorial/*.world.xml"), *SHARED.glob("worlds/tests/*.xml")])


def load_elements(path: Path) -> tuple[list, ParseContext]:
    ctx = ParseContext()
    out: list = []
    walker = Walker(ctx, {"element": lambda n: out.append(element_from_xml(n, ctx)),
                          "walls": lambda n: out.extend(parse_walls(n, ctx))}, on_unknown=lambda n: None)
    walker.start_file(path)
    for root in parse_file(path, warn=ctx.warn_at):
        walker.walk(root.children)
    return out, ctx


@pytest.mark.parametrize("path", WORLDS, ids=[p.name for p in WORLDS])
def test_world_elements_load_cleanly(path: Path):
    out, ctx = load_elements(path)
    assert out  # every shipped world has at least one element or wall
    other = [w for w in ctx.warnings if "asset not available" not in w]
    assert other == []
    for e in out:
        if isinstance(e, WorldElement):
            assert e.summary()


def test_all_shipped_worlds_found(worlds_dir: Path):
    assert len(WORLDS) == 13


def test_expected_contents(worlds_dir: Path):
    out, _ = load_elements(worlds_dir / "mvsim_tutorial" / "demo_walls.world.xml")
    planes = [e for e in out if getattr(e, "xml_class", "") == "vertical_plane"]
    assert len(planes) == 5 and sum(len(p.openings) for p in planes) == 11
    assert planes[0].params.thickness == pytest.approx(0.2)  # ${WALL_THICKNESS} from a <variable>
    out, _ = load_elements(worlds_dir / "tests" / "test-still-lidar2d.world.xml")
    assert sum(1 for e in out if not isinstance(e, WorldElement)) == 7
    out, _ = load_elements(worlds_dir / "mvsim_tutorial" / "demo_articulated_vehicle.world.xml")
    assert sum(1 for e in out if getattr(e, "xml_class", "") == "elevation_map") == 11
