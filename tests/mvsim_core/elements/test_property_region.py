"""<element class="property_region"> and property_at(): boxes, typed values, first match wins."""

from __future__ import annotations

import pytest

from mvsim_core.elements.property_region import PropertyRegion, property_at
from mvsim_core.errors import WorldFileError
from mvsim_core.xml.context import ParseContext


def region(build, name: str, value: str, box: str = "", ctx: ParseContext | None = None) -> PropertyRegion:
    e, _ = build(f'<element class="property_region">\n <property_name>{name}</property_name>\n {value}\n{box}'
                 f'</element>', ctx)
    assert isinstance(e, PropertyRegion)
    return e


FRICTION_BOX = ("<x_min>-7</x_min><y_min>-2</y_min><z_min>-1.0</z_min>"
                "<x_max>1</x_max><y_max>6</y_max><z_max>2.0</z_max>")


def test_friction_zone(build):
    e = region(build, "friction_mu", "<value_double>0.15</value_double>", FRICTION_BOX)
    assert e.name == "friction_mu" and e.value == 0.15 and isinstance(e.value, float)
    assert e.contains(0.0, 0.0, 0.0) and e.contains(1.0, 6.0, 2.0)  # borders included
    assert not e.contains(1.01, 0.0, 0.0) and not e.contains(0.0, 0.0, 2.5)
    assert "friction_mu = 0.15" in e.summary()


def test_default_box_and_value_types(build):
    b = region(build, "gps_no_coverage", "<value_bool>true</value_bool>")
    s = region(build, "surface", "<value_string> gravel </value_string>")
    assert b.value is True and s.value == "gravel"
    p = b.params
    assert (p.x_min, p.y_min, p.z_min, p.x_max, p.y_max, p.z_max) == (-1.0, -1.0, -1.0, 1.0, 1.0, 1.0)


def test_property_at_first_match_wins(build):
    ctx = ParseContext()
    big = region(build, "friction_mu", "<value_double>0.9</value_double>",
                 "<x_min>-10</x_min><x_max>10</x_max><y_min>-10</y_min><y_max>10</y_max>", ctx)
    small = region(build, "friction_mu", "<value_double>0.15</value_double>", "", ctx)
    rr = region(build, "friction_C_rr", "<value_double>0.08</value_double>", "", ctx)
    elements = [rr, big, small]
    assert property_at(elements, "friction_mu", 0.0, 0.0, 0.0) == 0.9
    assert property_at([rr, small, big], "friction_mu", 0.0, 0.0, 0.0) == 0.15
    assert property_at(elements, "friction_C_rr", 0.5, 0.5, 0.0) == 0.08
    assert property_at(elements, "friction_C_rr", 5.0, 0.0, 0.0) is None
    assert property_at(elements, "gps_no_coverage", 0.0, 0.0, 0.0) is None
    assert property_at([], "friction_mu", 0.0, 0.0, 0.0) is None


def test_property_name_required(build):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="property_region">\n <value_double>1</value_double>\n</element>')
    assert ei.value.line == 1 and "needs a non-empty <property_name>" in ei.value.message


def test_value_required(build):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="property_region">\n <property_name>friction_mu</property_name>\n</element>')
    assert ei.value.line == 1 and "needs one value" in ei.value.message


def test_only_one_value(build):
    with pytest.raises(WorldFileError) as ei:
        region(build, "friction_mu", "<value_double>1</value_double>\n <value_bool>true</value_bool>")
    assert ei.value.line == 4 and "exactly one value" in ei.value.message


def test_bad_value_type(build):
    with pytest.raises(WorldFileError) as ei:
        region(build, "gps_no_coverage", "<value_bool>perhaps</value_bool>")
    assert ei.value.line == 3 and "bad bool 'perhaps'" in ei.value.message


def test_inverted_box(build):
    with pytest.raises(WorldFileError) as ei:
        region(build, "friction_mu", "<value_double>1</value_double>", "<z_min>3</z_min>\n<z_max>2</z_max>\n")
    assert ei.value.line == 5 and "<z_max>" in ei.value.message
