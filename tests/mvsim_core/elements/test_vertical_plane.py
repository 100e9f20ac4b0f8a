"""<element class="vertical_plane">: openings (doors/windows), wall pieces around them, validation."""

from __future__ import annotations

import numpy as np
import pytest

from mvsim_core.elements.vertical_plane import Opening, VerticalPlane
from mvsim_core.errors import WorldFileError


def plane(build, body: str, ends: str = "<x0>0</x0><y0>0</y0><x1>10</x1><y1>0</y1>"):
    e, ctx = build(f'<element class="vertical_plane">\n {ends}\n{body}</element>')
    assert isinstance(e, VerticalPlane)
    return e, ctx


def spans(pieces):
    return [(round(p.s0, 9), round(p.s1, 9), round(p.z_min, 9), round(p.z_max, 9)) for p in pieces]


def test_defaults(build):
    e, ctx = build('<element class="vertical_plane"/>')
    p = e.params
    assert (p.x0, p.y0, p.x1, p.y1) == (-10.0, -10.0, -10.0, 10.0)
    assert p.z == 0.0 and p.height == 3.0 and p.thickness == 0.02 and p.cull_face == "NONE"
    assert e.length == 20.0 and e.openings == [] and ctx.warnings == []
    assert spans(e.segments()) == [(0.0, 20.0, 0.0, 3.0)]


def test_door_with_child_tags(build):
    e, ctx = plane(build, " <thickness>0.3</thickness>\n <door>\n  <position>0.5</position>\n  <width>1.2</width>\n"
                          "  <z_min>0.0</z_min>\n  <z_max>2.1</z_max>\n  <name>main_entrance</name>\n </door>\n")
    assert e.openings == [Opening("door", 0.5, 1.2, 0.0, 2.1, "main_entrance")]
    assert spans(e.segments()) == [(0.0, 4.4, 0.0, 3.0), (4.4, 5.6, 2.1, 3.0), (5.6, 10.0, 0.0, 3.0)]
    assert spans(e.collision_pieces()) == [(0.0, 4.4, 0.0, 3.0), (5.6, 10.0, 0.0, 3.0)]
    first = e.segments()[0]
    assert first.p0 == (0.0, 0.0) and first.p1 == pytest.approx((4.4, 0.0))
    assert np.allclose(first.polygon, [[0, -0.15], [4.4, -0.15], [4.4, 0.15], [0, 0.15]])
    assert ctx.warnings == []


def test_window_with_attributes_keeps_2d_body_whole(build):
    e, _ = plane(build, ' <z>1</z>\n <window position="0.5" width="2" z_start="1" z_end="2"/>\n',
                 ends="<x0>0</x0><y0>0</y0><x1>0</x1><y1>10</y1>")
    assert e.openings[0].kind == "window" and (e.openings[0].z_min, e.openings[0].z_max) == (1.0, 2.0)
    # heights are above the wall base z = 1
    assert spans(e.segments()) == [(0.0, 4.0, 1.0, 4.0), (4.0, 6.0, 1.0, 2.0), (4.0, 6.0, 3.0, 4.0),
                                   (6.0, 10.0, 1.0, 4.0)]
    assert spans(e.collision_pieces()) == [(0.0, 10.0, 1.0, 4.0)]
    below = e.segments()[1]
    assert below.p0 == (0.0, 4.0) and below.p1 == (0.0, 6.0)


def test_adjacent_equal_openings_merge(build):
    e, _ = plane(build, ' <window position="0.3" width="2" z_min="1" z_max="2"/>\n'
                        ' <window position="0.5" width="2" z_min="1" z_max="2"/>\n')
    assert spans(e.segments()) == [(0.0, 2.0, 0.0, 3.0), (2.0, 6.0, 0.0, 1.0), (2.0, 6.0, 2.0, 3.0),
                                   (6.0, 10.0, 0.0, 3.0)]


def test_door_and_window_overlap_and_clipping(build):
    e, _ = plane(build, ' <door position="0" width="2"/>\n <window position="0.05" width="1" z_min="2.5" '
                        'z_max="2.8"/>\n')
    # the door is clipped to the wall start; the window (s 0..1) sits above the door (2.1..3)
    assert spans(e.segments()) == [(0.0, 1.0, 2.1, 2.5), (0.0, 1.0, 2.8, 3.0), (1.0, 10.0, 0.0, 3.0)]
    assert spans(e.collision_pieces()) == [(1.0, 10.0, 0.0, 3.0)]


def test_two_doors(build):
    e, _ = plane(build, ' <door position="0.4" width="0.9" z_min="0.0" z_max="2.1" name="double_door_left" />\n'
                        ' <door position="0.6" width="0.9" z_min="0.0" z_max="2.1" name="double_door_right" />\n',
                 ends="<x0>0</x0> <y0>-5</y0> <x1>0</x1> <y1>5</y1>")
    assert [o.name for o in e.openings] == ["double_door_left", "double_door_right"]
    assert spans(e.collision_pieces()) == [(0.0, 3.55, 0.0, 3.0), (4.45, 5.55, 0.0, 3.0), (6.45, 10.0, 0.0, 3.0)]
    assert "2 door(s), 0 window(s)" in e.summary()


def test_opening_defaults(build):
    e, _ = plane(build, " <door/>\n")
    assert e.openings == [Opening("door", 0.5, 1.0, 0.0, 2.1, "")]


def test_unknown_opening_tags_warn(build):
    _, ctx = plane(build, ' <door colour="red">\n  <knob>brass</knob>\n </door>\n')
    assert len(ctx.warnings) == 2
    assert any('unknown attribute colour="..." of <door>' in w for w in ctx.warnings)
    assert any(":4: unknown tag <knob> in <door>" in w for w in ctx.warnings)


@pytest.mark.parametrize("pos", ["1.5", "-0.1"])
def test_position_out_of_range(build, pos: str):
    with pytest.raises(WorldFileError) as ei:
        plane(build, f" <door>\n  <position>{pos}</position>\n </door>\n")
    assert ei.value.line == 4 and "position must be between 0" in ei.value.message


def test_inverted_opening_heights(build):
    with pytest.raises(WorldFileError) as ei:
        plane(build, ' <window z_min="2" z_max="1"/>\n')
    assert ei.value.line == 3 and "z_max (1) must be greater than z_min (2)" in ei.value.message


def test_zero_length_wall(build):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="vertical_plane"><x0>1</x0><y0>1</y0><x1>1</x1><y1>1</y1></element>')
    assert ei.value.line == 1 and "zero length" in ei.value.message


def test_thickness_must_be_positive(build):
    with pytest.raises(WorldFileError) as ei:
        plane(build, " <thickness>0</thickness>\n")
    assert ei.value.line == 3 and "<thickness> must be greater than 0 m" in ei.value.message
