"""<walls>: segments from a model's wireframe or from <shape> point pairs; boxes, numbering, errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mvsim_core.elements.walls import WallSegment, wall_polygon
from mvsim_core.errors import WorldFileError
from mvsim_core.geometry.polygons import signed_area
from mvsim_core.xml.context import ParseContext

TURTLEBOT_SHAPE = """<walls>
  <color>#404040</color>
  <wallThickness>0.3</wallThickness>
  <wallHeight>1.0</wallHeight>
  <shape>
    <pt>-3 0</pt> <pt>-2 -2.75</pt>
    <pt>-2 -2.75</pt> <pt>2 -2.75</pt>
    <pt>2 -2.75</pt> <pt>3.5 0</pt>
    <pt>3.5 0</pt> <pt>2 2.75</pt>
    <pt>2 2.75</pt> <pt>-2 2.75</pt>
    <pt>-2 2.75</pt> <pt>-3 0</pt>
  </shape>
</walls>"""


def test_test_walls_dae(build_walls, worlds_dir: Path):
    dae = worlds_dir / "mvsim_tutorial" / "testWalls.dae"
    walls, ctx = build_walls(f"<walls>\n  <color>#505050</color>\n  <model_uri>{dae}</model_uri>\n"
                             f"  <wallThickness>0.10</wallThickness>\n</walls>")
    assert len(walls) == 7
    assert [w.name for w in walls] == [f"wall_{i:04d}" for i in range(1, 8)]
    for w in walls:
        assert isinstance(w, WallSegment)
        assert w.thickness == 0.10 and w.height == 2.0 and (w.zmin, w.zmax) == (0.0, 2.0)
        assert w.color == (0x50, 0x50, 0x50, 0xFF)
        assert w.polygon.shape == (4, 2) and signed_area(w.polygon) > 0
    first, last = walls[0], walls[6]
    assert (first.p0, first.p1) == ((-4.0, 0.0), (16.0, 0.0))
    assert np.allclose(first.polygon, [[-4, -0.05], [16, -0.05], [16, 0.05], [-4, 0.05]])
    # (16, 0) is also an end of the first wall: the last wall is extended by half a thickness below it
    assert (last.p0, last.p1) == ((16.0, 0.0), (16.0, 4.0))
    assert np.allclose(last.polygon, [[16.05, -0.05], [16.05, 4], [15.95, 4], [15.95, -0.05]])
    assert last.length == pytest.approx(4.05) and last.yaw == pytest.approx(math.pi / 2)
    assert last.center == pytest.approx((16.0, 1.975))
    assert ctx.warnings == []


def test_turtlebot_shape_pairs(build_walls):
    walls, ctx = build_walls(TURTLEBOT_SHAPE)
    assert len(walls) == 6
    assert all(w.thickness == 0.3 and w.height == 1.0 and w.color == (64, 64, 64, 255) for w in walls)
    assert walls[1].p0 == (-2.0, -2.75) and walls[1].p1 == (2.0, -2.75)
    # start of wall 2 meets the end of wall 1: extended by 0.15 m; its far end is new: not extended
    assert walls[1].length == pytest.approx(4.15)
    assert walls[0].length == pytest.approx(math.hypot(1.0, 2.75))
    assert walls[5].length == pytest.approx(math.hypot(1.0, 2.75) + 0.3)  # both ends meet earlier walls
    assert ctx.warnings == []


def test_two_segment_shape_defaults(build_walls):
    walls, _ = build_walls("<walls><shape><pt>0 0</pt><pt>2 0</pt><pt>2 0</pt><pt>2 3</pt></shape></walls>")
    assert len(walls) == 2
    w = walls[0]
    assert w.thickness == 0.10 and w.height == 2.0 and w.color == (0x32, 0x32, 0x32, 0xFF)
    assert w.length == pytest.approx(2.0) and walls[1].length == pytest.approx(3.05)


def test_three_point_shape_is_an_error(build_walls):
    with pytest.raises(WorldFileError) as ei:
        build_walls("<walls>\n <shape>\n  <pt>0 0</pt>\n  <pt>1 0</pt>\n  <pt>1 1</pt>\n </shape>\n</walls>")
    assert ei.value.line == 2 and "even number of <pt>" in ei.value.message and "got 3" in ei.value.message


def test_numbering_continues_across_walls(build_walls):
    ctx = ParseContext()
    a, _ = build_walls("<walls><shape><pt>0 0</pt><pt>1 0</pt></shape></walls>", ctx)
    b, _ = build_walls("<walls><shape><pt>5 0</pt><pt>6 0</pt><pt>7 0</pt><pt>8 0</pt></shape></walls>", ctx)
    assert [w.name for w in a + b] == ["wall_0001", "wall_0002", "wall_0003"]


def test_transformation_and_scale_of_model(build_walls, worlds_dir: Path):
    dae = worlds_dir / "mvsim_tutorial" / "testWalls.dae"
    rot90 = "[0 -1 0 1; 1 0 0 2; 0 0 1 0; 0 0 0 1]"
    walls, _ = build_walls(f"<walls><model_uri>{dae}</model_uri><scale>2</scale>"
                           f"<transformation>{rot90}</transformation></walls>")
    # (-4, 0)-(16, 0) scaled to (-8, 0)-(32, 0), rotated +90 deg, moved by (1, 2)
    assert walls[0].p0 == pytest.approx((1.0, -6.0)) and walls[0].p1 == pytest.approx((1.0, 34.0))


def test_transformation_of_shape(build_walls):
    walls, _ = build_walls("<walls><transformation>[1 0 0 1; 0 1 0 2; 0 0 1 0; 0 0 0 1]</transformation>"
                           "<shape><pt>0 0</pt><pt>1 0</pt></shape></walls>")
    assert walls[0].p0 == (1.0, 2.0) and walls[0].p1 == (2.0, 2.0)


def test_wall_polygon_helper():
    poly = wall_polygon(np.array([0.0, 0.0]), np.array([2.0, 0.0]), 0.2, True, False)
    assert np.allclose(poly, [[-0.1, -0.1], [2, -0.1], [2, 0.1], [-0.1, 0.1]])


# ------------------------------------------------------------------ errors and warnings
def test_missing_local_model_is_an_error_at_model_uri(build_walls, tmp_path: Path):
    with pytest.raises(WorldFileError) as ei:
        build_walls("<walls>\n  <color>#505050</color>\n  <model_uri>nothere.dae</model_uri>\n</walls>")
    assert ei.value.line == 3
    assert ei.value.message.startswith(f"wall model not found: {tmp_path / 'nothere.dae'}")


def test_remote_model_unavailable_is_a_warning(build_walls):
    walls, ctx = build_walls("<walls>\n <model_uri>https://example.invalid/walls.dae</model_uri>\n</walls>")
    assert walls == []
    assert "https://example.invalid/walls.dae" in ctx.missing_assets
    assert ":2: asset not available" in ctx.warnings[0]


def test_neither_shape_nor_model(build_walls):
    with pytest.raises(WorldFileError) as ei:
        build_walls("<walls>\n <wallHeight>3</wallHeight>\n</walls>")
    assert ei.value.line == 1 and "needs a <model_uri>" in ei.value.message


def test_bad_transformation(build_walls):
    with pytest.raises(WorldFileError) as ei:
        build_walls("<walls>\n <transformation>[1 0; 0 1]</transformation>\n"
                    " <shape><pt>0 0</pt><pt>1 0</pt></shape>\n</walls>")
    assert ei.value.line == 2 and "must be a 4x4 matrix" in ei.value.message


def test_zero_length_segment(build_walls):
    with pytest.raises(WorldFileError) as ei:
        build_walls("<walls>\n <shape>\n  <pt>1 1</pt>\n  <pt>1 1</pt>\n </shape>\n</walls>")
    assert ei.value.line == 4 and "zero length" in ei.value.message


def test_bad_point(build_walls):
    with pytest.raises(WorldFileError) as ei:
        build_walls("<walls>\n <shape>\n  <pt>1 1</pt>\n  <pt>1</pt>\n </shape>\n</walls>")
    assert ei.value.line == 4 and "bad vector '1' for <pt>" in ei.value.message


@pytest.mark.parametrize("tag", ["wallThickness", "wallHeight"])
def test_thickness_and_height_positive(build_walls, tag: str):
    with pytest.raises(WorldFileError) as ei:
        build_walls(f"<walls>\n <{tag}>0</{tag}>\n <shape><pt>0 0</pt><pt>1 0</pt></shape>\n</walls>")
    assert ei.value.line == 2 and f"<{tag}> must be greater than 0 m" in ei.value.message


def test_unknown_tag_and_ignored_model_warn(build_walls):
    walls, ctx = build_walls("<walls>\n <model_uri>x.dae</model_uri>\n <wallThicknes>1</wallThicknes>\n"
                             " <shape><pt>0 0</pt><pt>1 0</pt></shape>\n</walls>")
    assert len(walls) == 1
    assert any(":3: unknown tag <wallThicknes> in <walls>" in w for w in ctx.warnings)
    assert any(":2: <model_uri> of <walls> is ignored" in w for w in ctx.warnings)


def test_points_beyond_the_number_range_after_the_transformation(build_walls):
    with pytest.raises(WorldFileError) as ei:
        build_walls("<walls>\n  <transformation>[1e9 0 0 0; 0 1 0 0; 0 0 1 0; 0 0 0 1]</transformation>\n"
                    "  <shape>\n <pt>0 0</pt> <pt>2 0</pt>\n  </shape>\n</walls>")
    assert ei.value.line == 3 and ei.value.message == (
        "<walls>: a point lies beyond 1e+09 m (or is not a number) once scaled and transformed; check <scale> and "
        "<transformation>")


def test_segment_count_is_bounded(build_walls, monkeypatch):
    import mvsim_core.elements.walls as walls_module

    monkeypatch.setattr(walls_module, "MAX_SEGMENTS", 2)
    with pytest.raises(WorldFileError) as ei:
        build_walls(TURTLEBOT_SHAPE)
    assert ei.value.line == 5 and ei.value.message == (
        "<walls> has 6 segments, more than 2 (each is a static block); use a simpler model")


def test_corner_extension_with_many_segments(build_walls):
    """The end index finds earlier ends in constant time and agrees with the brute-force rule (an end within 1.01
    thicknesses of an end of an earlier segment is extended): 2000 segments of a zig-zag with gaps."""
    rng = np.random.default_rng(3)
    pts = np.cumsum(rng.uniform(-0.3, 0.3, size=(4000, 2)), axis=0)
    text = "".join(f"<pt>{float(x)!r} {float(y)!r}</pt>" for x, y in pts)
    walls, _ = build_walls(f"<walls>\n  <wallThickness>0.2</wallThickness>\n  <shape>{text}</shape>\n</walls>")
    assert len(walls) == 2000
    ends: list[np.ndarray] = []
    extended = 0
    for k, w in enumerate(walls):
        a, b = pts[2 * k], pts[2 * k + 1]
        near = [bool(ends) and float(np.min(np.linalg.norm(np.asarray(ends) - q, axis=1))) < 1.01 * 0.2
                for q in (a, b)]
        extended += sum(near)
        assert np.array_equal(w.polygon, wall_polygon(a, b, 0.2, near[0], near[1]))
        ends += [a, b]
    assert extended > 1000
