"""<element class="horizontal_plane">: defaults, ground height, validation."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from mvsim_core.elements.horizontal_plane import HorizontalPlane
from mvsim_core.errors import WorldFileError


def test_defaults(build):
    e, ctx = build('<element class="horizontal_plane"/>')
    assert isinstance(e, HorizontalPlane)
    p = e.params
    assert (p.x_min, p.x_max, p.y_min, p.y_max, p.z) == (-10.0, 10.0, -10.0, 10.0, 0.0)
    assert p.color == (0xA0, 0xA0, 0xA0, 0xFF) and p.enable_shadows is True and p.cull_face == "NONE"
    assert p.texture == "" and p.texture_size_x == 1.0 and p.texture_size_y == 1.0
    assert e.texture_path is None and ctx.warnings == []


def test_elevation_inside_and_outside(build):
    e, _ = build('<element class="horizontal_plane"><x_min>-7</x_min><y_min>-2</y_min><x_max>1</x_max>'
                 '<y_max> 6</y_max><z>0.01</z><cull_face>back</cull_face></element>')
    assert e.elevation_at(0.0, 0.0) == 0.01
    assert e.elevation_at(1.0, 6.0) == 0.01  # border included
    assert e.elevation_at(1.01, 0.0) is None and e.elevation_at(0.0, -2.5) is None
    assert e.params.cull_face == "BACK"
    assert e.summary() == "horizontal_plane [-7, 1] x [-2, 6] m at z = 0.01 m"


def test_local_texture_found(build, tmp_path: Path):
    Image.new("RGB", (4, 4)).save(tmp_path / "t.png")
    e, ctx = build('<element class="horizontal_plane"><texture>t.png</texture></element>')
    assert e.texture_path == tmp_path / "t.png" and ctx.warnings == []


def test_missing_texture_is_only_a_warning(build):
    e, ctx = build('<element class="horizontal_plane">\n <texture>nothere.jpg</texture>\n</element>')
    assert e.texture_path is None
    assert "nothere.jpg" in ctx.missing_assets and ":2: asset not available: nothere.jpg" in ctx.warnings[0]


def test_bad_cull_face(build):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="horizontal_plane">\n <cull_face>SIDEWAYS</cull_face>\n</element>')
    assert ei.value.line == 2 and "expected one of NONE, BACK, FRONT" in ei.value.message


def test_inverted_rectangle(build):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="horizontal_plane">\n <y_min>5</y_min>\n <y_max>-5</y_max>\n</element>')
    assert ei.value.line == 3 and "<y_max>" in ei.value.message
