"""<marker type="line_strip">: points (x y [z]) shifted by <translation>, colour, errors."""

from __future__ import annotations

import pytest

import mvsim_core as mv
from mvsim_core.objects.marker import parse_marker
from mvsim_core.xml.context import ParseContext


def test_points_with_translation_and_color(load):
    w = load('<marker type="line_strip">\n<points>0 0\n 1 0 1\n\n 2 2 0.5\n</points>\n'
             "<color>#00ff00</color><translation>1 2 0.5</translation></marker>")
    (m,) = w.markers
    assert m.type == "line_strip" and m.color == (0, 255, 0, 255)
    assert m.points.tolist() == [[1.0, 2.0, 0.5], [2.0, 2.0, 1.5], [3.0, 4.0, 1.0]]


def test_defaults_and_two_number_translation(nodes):
    m = parse_marker(nodes("<marker><points>1 1</points><translation>-1 3</translation></marker>")[0],
                     ParseContext())
    assert m.type == "line_strip" and m.color == (255, 255, 255, 255) and m.points.tolist() == [[0.0, 4.0, 0.0]]
    empty = parse_marker(nodes("<marker/>")[0], ParseContext())
    assert empty.points.shape == (0, 3)


@pytest.mark.parametrize(("marker", "line", "message"), [
    ("<marker>\n<points>0 0\n1\n</points></marker>", 3, "marker point 2 needs 'x y [z]', got '1'"),
    ('<marker\n type="arrow"/>', 3, "unknown marker type 'arrow'; the only type is line_strip"),
])
def test_errors(load, marker, line, message):
    with pytest.raises(mv.WorldFileError) as ei:
        load(marker)
    assert (ei.value.line, ei.value.message) == (line, message)
