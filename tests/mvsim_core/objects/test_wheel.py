"""Wheels (§1.11): attribute defaults, pos with yaw, spin inertia m·r²/2 or explicit, errors."""

from __future__ import annotations

import math

import pytest

from mvsim_core.errors import WorldFileError
from mvsim_core.objects.wheel import parse_wheel
from mvsim_core.xml.context import ParseContext


def wheel(nodes, text, default_pos=(0.0, 0.5), name="l_wheel"):
    ctx = ParseContext()
    return parse_wheel(name, nodes(text)[0], default_pos, ctx), ctx


def test_missing_tag_gives_defaults_at_slot():
    w = parse_wheel("r_wheel", None, (0.0, -0.5), ParseContext())
    assert (w.name, w.x, w.y, w.yaw) == ("r_wheel", 0.0, -0.5, 0.0)
    assert (w.mass, w.width, w.diameter, w.radius, w.color) == (2.0, 0.2, 0.4, 0.2, (0x32, 0x32, 0x32, 255))
    assert w.inertia == pytest.approx(0.5 * 2.0 * 0.2 ** 2) == pytest.approx(0.04)
    assert (w.linked_yaw, w.linked_yaw_offset, w.visuals) == ("", 0.0, [])


def test_attributes_pos_with_yaw_and_auto_inertia(nodes):
    w, ctx = wheel(nodes, '<l_wheel pos="0.1 0.3 90" mass="4" diameter="0.5" width="0.1" color="#112233"/>')
    assert (w.x, w.y) == (0.1, 0.3) and w.yaw == pytest.approx(math.pi / 2)
    assert (w.mass, w.width, w.diameter, w.color) == (4.0, 0.1, 0.5, (0x11, 0x22, 0x33, 255))
    assert w.inertia == pytest.approx(0.5 * 4 * 0.25 ** 2) == pytest.approx(0.125)
    assert ctx.warnings == []


def test_two_number_pos_explicit_inertia_and_linked_yaw(nodes):
    w, _ = wheel(nodes, '<fl_wheel pos="1.3 0.8" inertia="0.7" linked_yaw="steer_l" linked_yaw_offset_deg="45"/>',
                 default_pos=(0.0, 0.0), name="fl_wheel")
    assert (w.x, w.y, w.yaw, w.inertia) == (1.3, 0.8, 0.0, 0.7)
    assert w.linked_yaw == "steer_l" and w.linked_yaw_offset == pytest.approx(math.pi / 4)


def test_no_pos_keeps_default_position(nodes):
    w, _ = wheel(nodes, '<l_wheel mass="1"/>', default_pos=(0.25, 0.4))
    assert (w.x, w.y, w.mass, w.inertia) == (0.25, 0.4, 1.0, pytest.approx(0.02))


@pytest.mark.parametrize(("text", "message"), [
    ('<l_wheel\n pos="1"/>', "bad pos='1' of <l_wheel>: expected 'x y' or 'x y yaw_deg'"),
    ('<l_wheel\n pos="\t\n"/>', "bad pos='\\t\\n' of <l_wheel>: expected 'x y' or 'x y yaw_deg'"),
    ('<l_wheel\n inertia="0"/>', "inertia of <l_wheel> must be greater than 0 kg·m² (got 0)"),
    ('<l_wheel\n mass="-2"/>', "must be greater than 0 kg (got -2)"),
])
def test_errors_point_at_attribute_line(nodes, text, message):
    with pytest.raises(WorldFileError) as ei:
        wheel(nodes, text)
    assert ei.value.line == 2 and message in ei.value.message


def test_visual_child_and_unknown_child(nodes, worlds_dir):
    dae = worlds_dir / "models" / "jackal_description" / "jackal-wheel.dae"
    w, ctx = wheel(nodes, f'<l_wheel>\n<visual><model_uri>{dae}</model_uri></visual>\n<tyre/>\n</l_wheel>')
    assert len(w.visuals) == 1 and w.visuals[0].path == dae
    assert len(ctx.warnings) == 1 and ctx.warnings[0].endswith(":3: unknown tag <tyre> in <l_wheel> is ignored")
