"""Human actors (§1.15): parameter defaults, class/instance lookup, waypoint paths (3 or 6 numbers), errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.geometry.polygons import signed_area

R = math.radians


def test_defaults_and_names(load):
    w = load('<actor/>\n<actor name="bob"/>\n<actor/>')
    assert list(w.actors) == ["actor1", "bob", "actor2"]
    a = w.actors["actor1"]
    p = a.params
    assert (p.walking_speed, p.running_speed, p.height, p.collision_radius, p.collision_height) == (
        1.4, 3.5, 1.75, 0.3, 1.7)
    assert (p.animation_idle, p.animation_walk, p.animation_run) == ("", "", "")
    assert a.pose == (0.0,) * 6 and a.path == [] and a.loop and a.visuals == [] and a.class_name == ""


def test_class_params_and_path(load):
    w = load('<actor:class name="walker"><walking_speed>1.1</walking_speed><height>1.6</height>'
             '<animation_walk>Walk</animation_walk>\n'
             '<path loop="false"><waypoint>9 9 0</waypoint></path></actor:class>\n'
             '<actor name="ann" class="walker"><height>1.8</height><init_pose>1 2 90</init_pose>\n'
             '<path><waypoint pause="2.5" animation="run">3 4 90</waypoint>\n'
             '<waypoint animation="idle">1 2 0.5 180 10 -20</waypoint>\n<waypoint>0 0 0</waypoint></path>'
             "</actor>")
    a = w.actors["ann"]
    assert a.class_name == "walker" and (a.params.walking_speed, a.params.height) == (1.1, 1.8)
    assert a.params.animation_walk == "Walk" and a.pose == pytest.approx((1, 2, 0, R(90), 0, 0))
    assert a.loop and len(a.path) == 3  # the instance's <path> wins over the class's
    assert a.path[0].pose == pytest.approx((3, 4, 0, R(90), 0, 0)) and (a.path[0].pause, a.path[0].animation) == (
        2.5, "run")
    assert a.path[1].pose == pytest.approx((1, 2, 0.5, R(180), R(10), R(-20))) and a.path[1].animation == "idle"
    assert (a.path[2].pause, a.path[2].animation) == (0.0, "walk")
    b = load('<actor:class name="walker"><path loop="false"><waypoint>9 9 0</waypoint></path></actor:class>\n'
             '<actor name="c" class="walker"/>').actors["c"]
    assert not b.loop and b.path[0].pose[:2] == (9.0, 9.0)


@pytest.mark.parametrize(("waypoint", "message"), [
    ("<waypoint>1 2</waypoint>", "<waypoint> needs 'x y yaw' or 'x y z yaw pitch roll', got 2 numbers"),
    ('<waypoint pause="soon">1 2 0</waypoint>',
     "bad number 'soon' for pause=\"...\" of <waypoint>; expected a number such as 1.5"),
    ('<waypoint pause="inf">1 2 0</waypoint>',
     "bad number 'inf' for pause=\"...\" of <waypoint> (not a finite number); expected a number such as 1.5"),
    ('<waypoint pause="-1">1 2 0</waypoint>', 'pause="..." of <waypoint> must be at least 0 s (got -1)'),
])
def test_waypoint_errors(load, waypoint, message):
    with pytest.raises(mv.WorldFileError) as ei:
        load(f'<actor name="a"><path>\n{waypoint}</path></actor>')
    assert (ei.value.line, ei.value.message) == (3, message)


def test_unknown_tag_warns(load):
    w = load('<actor name="a">\n<speed>2</speed></actor>')
    assert w.warnings == [f"{w.path}:3: unknown tag <speed> in <actor> is ignored"]


def test_the_person_shaped_stand_in_is_half_a_metre_wide_and_1_8_m_tall(load):
    """Without collision dims written: a 0.5 × 0.5 × 1.8 m figure (never the 1 m square of blocks): a body of the
    full width up to 1.566 m and a 0.18 m wide head above it. With ``collision_radius`` / ``collision_height``
    written: that size (2 r wide, collision_height tall)."""
    w = load('<actor name="a"/>\n<actor name="b"><collision_radius>0.4</collision_radius>'
             '<collision_height>1.5</collision_height></actor>\n'
             '<actor name="c"><collision_height>1.2</collision_height></actor>')
    for name, width, height in (("a", 0.5, 1.8), ("b", 0.8, 1.5), ("c", 0.6, 1.2)):
        a = w.actors[name]
        assert a.body_size == pytest.approx((width, height))
        parts = a.figure()
        pts = np.vstack([p for p, _, _ in parts])
        assert pts.min(axis=0) == pytest.approx([-width / 2, -width / 2], abs=1e-12)
        assert pts.max(axis=0) == pytest.approx([width / 2, width / 2], abs=1e-12)
        assert min(z0 for _, z0, _ in parts) == 0.0 and max(z1 for _, _, z1 in parts) == pytest.approx(height)
        (body, b0, b1), (head, h0, h1) = parts
        assert (b0, b1, h0, h1) == pytest.approx((0.0, 0.87 * height, 0.87 * height, height))
        assert np.ptp(head[:, 0]) == pytest.approx(0.36 * width) and np.ptp(body[:, 1]) == pytest.approx(width)
        assert signed_area(body) > 0 and signed_area(head) > 0  # counter-clockwise
