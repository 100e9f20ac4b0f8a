"""Element registry and dispatch on class="..."."""

from __future__ import annotations

import pytest

from mvsim_core.elements import WorldElement, element_from_xml
from mvsim_core.elements.ground_grid import GroundGrid
from mvsim_core.errors import WorldFileError
from mvsim_core.xml.context import ParseContext

UPSTREAM_CLASSES = {"ground_grid", "occupancy_grid", "elevation_map", "horizontal_plane", "vertical_plane",
                    "pointcloud", "skybox", "property_region"}


def test_every_upstream_class_is_registered():
    assert set(WorldElement.registry) == UPSTREAM_CLASSES
    for name, cls in WorldElement.registry.items():
        assert cls.xml_class == name


def test_dispatch_by_class(build):
    e, ctx = build('<element class="ground_grid"/>')
    assert isinstance(e, GroundGrid)
    assert ctx.warnings == []


def test_base_from_xml_dispatches_too(xml_node):
    e = WorldElement.from_xml(xml_node("<element class='ground_grid'/>"), ParseContext())
    assert isinstance(e, GroundGrid)


def test_unknown_class_is_an_error_at_its_line_listing_known_ones(xml_node):
    node = xml_node('<mvsim_world>\n\n<element class="lava_lake">\n</element>\n</mvsim_world>').children[0]
    with pytest.raises(WorldFileError) as ei:
        element_from_xml(node, ParseContext())
    err = ei.value
    assert err.line == 3 and err.file.endswith("w.xml")
    assert "unknown element class 'lava_lake'" in err.message
    for name in UPSTREAM_CLASSES:
        assert name in err.message


def test_missing_class_attribute(build):
    with pytest.raises(WorldFileError) as ei:
        build("<element>\n</element>")
    assert ei.value.line == 1 and 'needs a class="..."' in ei.value.message and "ground_grid" in ei.value.message


def test_class_attribute_goes_through_substitution(xml_node):
    ctx = ParseContext(variables={"K": "ground_grid"})
    e = element_from_xml(xml_node('<element class="${K}"/>'), ctx)
    assert e.xml_class == "ground_grid"


def test_unknown_child_tag_warns_once_with_its_line(build):
    e, ctx = build('<element class="ground_grid">\n  <interval>2</interval>\n  <colour>#ff0000</colour>\n</element>')
    assert e.params.interval == 2.0
    assert len(ctx.warnings) == 1
    assert ctx.warnings[0].endswith(':3: unknown tag <colour> in <element class="ground_grid"> is ignored')


def test_repr_and_summary(build):
    e, _ = build('<element class="ground_grid"/>')
    assert e.summary().startswith("ground_grid")
    assert "GroundGrid" in repr(e)
    assert e.elevation_at(0.0, 0.0) is None
