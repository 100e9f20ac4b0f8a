"""``<friction class="...">``: registry, defaults, values, validation, and the shipped vehicle files."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvsim_core.dynamics.friction import DefaultFriction, EllipseFriction, FrictionModel, WardIagnemmaFriction
from mvsim_core.errors import WorldFileError
from mvsim_core.xml.context import ParseContext

REPO = Path(__file__).resolve().parents[4]
VEHICLE_FILES = sorted((REPO.parent / "shared" / "worlds" / "definitions").glob("*.vehicle.xml")) + \
    sorted((REPO / "worlds" / "definitions").glob("*.vehicle.xml"))


def test_registry():
    assert FrictionModel.registry == {"default": DefaultFriction, "wardiagnemma": WardIagnemmaFriction,
                                      "ellipse": EllipseFriction}


def test_absent_element_gives_default_model_with_defaults():
    m = FrictionModel.from_xml(None, ParseContext(env={}))
    assert type(m) is DefaultFriction
    assert (m.mu, m.c_damping, m.c_rr) == (0.8, 0.01, 0.0)
    assert m.node is None
    assert m.has_mu


EXPECTED_DEFAULTS = {
    "default": {"mu": 0.8, "C_damping": 0.01, "C_rr": 0.0},
    "wardiagnemma": {"mu": 0.8, "C_damping": 0.01, "C_rr": 0.0, "A_roll": 50.0, "R1": 0.0075, "R2": 0.02},
    "ellipse": {"C_damping": 0.01, "C_rr": 0.0, "C_s": 7.5, "C_alpha": 8.5, "slip_angle_saturation": 0.1,
                "slip_ratio_saturation": 0.1, "C_alpha_s": 0.5, "C_s_alpha": 0.5},
}


@pytest.mark.parametrize("cls_name", sorted(EXPECTED_DEFAULTS))
def test_defaults_of_each_model(xml_node, cls_name):
    ctx = ParseContext(env={})
    m = FrictionModel.from_xml(xml_node(f'<friction class="{cls_name}"/>'), ctx)
    assert m.xml_class == cls_name
    assert dict(m.params) == EXPECTED_DEFAULTS[cls_name]
    assert dict(type(m).defaults().params) == EXPECTED_DEFAULTS[cls_name]
    assert ctx.warnings == []


def test_values_and_substitution(xml_node):
    ctx = ParseContext(env={}, variables={"MU": "0.55"})
    m = FrictionModel.from_xml(xml_node('<friction class="wardiagnemma"><mu>${MU}</mu><C_damping>10</C_damping>'
                                        "<A_roll>40</A_roll><R1>$f{2*0.005}</R1><R2>0.03</R2></friction>"), ctx)
    assert isinstance(m, WardIagnemmaFriction)
    assert (m.mu, m.c_damping, m.c_rr) == (0.55, 10.0, 0.0)
    assert (m.params.A_roll, m.params.R1, m.params.R2) == (40.0, 0.01, 0.03)


def test_ellipse_has_no_mu(xml_node, xml_file):
    ctx = ParseContext(env={})
    m = FrictionModel.from_xml(xml_node('<friction class="ellipse">\n  <mu>0.9</mu>\n</friction>'), ctx)
    assert not m.has_mu
    assert "mu" not in m.params
    assert ctx.warnings == [f'{xml_file}:2: unknown tag <mu> in <friction class="ellipse"> is ignored']


def test_subclass_from_xml_builds_that_class(xml_node):
    m = EllipseFriction.from_xml(xml_node("<friction><C_s>5</C_s></friction>"), ParseContext(env={}))
    assert isinstance(m, EllipseFriction) and m.params.C_s == 5.0


def test_unknown_class_lists_known_ones(xml_node, xml_file):
    with pytest.raises(WorldFileError) as e:
        FrictionModel.from_xml(xml_node('<friction\n  class="coulomb"/>'), ParseContext(env={}))
    assert (e.value.file, e.value.line) == (xml_file, 2)
    assert '"coulomb"' in e.value.message
    assert "default, ellipse, wardiagnemma" in e.value.message


def test_missing_class_is_an_error(xml_node, xml_file):
    with pytest.raises(WorldFileError) as e:
        FrictionModel.from_xml(xml_node("\n<friction><mu>1</mu></friction>"), ParseContext(env={}))
    assert (e.value.file, e.value.line) == (xml_file, 2)
    assert 'class="..."' in e.value.message


@pytest.mark.parametrize("cls_name, tag, value, words", [
    ("default", "mu", "-0.1", "at least 0"),
    ("default", "C_damping", "-1", "at least 0"),
    ("default", "C_rr", "x", "bad number"),
    ("wardiagnemma", "R2", "-0.02", "at least 0"),
    ("ellipse", "slip_angle_saturation", "0", "greater than 0"),
    ("ellipse", "slip_ratio_saturation", "-1", "greater than 0"),
    ("ellipse", "C_alpha_s", "1.5", "between 0 and 1"),
    ("ellipse", "C_s_alpha", "-0.5", "at least 0"),
])
def test_bad_values_are_located(xml_node, xml_file, cls_name, tag, value, words):
    with pytest.raises(WorldFileError) as e:
        FrictionModel.from_xml(xml_node(f'<friction class="{cls_name}">\n\n  <{tag}>{value}</{tag}>\n</friction>'),
                               ParseContext(env={}))
    assert (e.value.file, e.value.line) == (xml_file, 3)
    assert tag in e.value.message and words in e.value.message


def test_unknown_tag_warned(xml_node, xml_file):
    ctx = ParseContext(env={})
    FrictionModel.from_xml(xml_node('<friction class="default"><mu>1</mu>\n<muu>2</muu></friction>'), ctx)
    assert ctx.warnings == [f'{xml_file}:2: unknown tag <muu> in <friction class="default"> is ignored']


def test_summary():
    assert FrictionModel.defaults().summary() == "default (mu=0.8, C_damping=0.01, C_rr=0)"


@pytest.mark.parametrize("path", VEHICLE_FILES, ids=lambda p: p.name)
def test_shipped_vehicle_friction_blocks_parse_without_warnings(path, vehicle_classes):
    seen = 0
    for _, root in vehicle_classes(path):
        ctx = ParseContext(env={})
        m = FrictionModel.from_xml(root.child("friction"), ctx)
        assert isinstance(m, FrictionModel)
        assert ctx.warnings == []
        seen += 1
    assert seen >= 1
