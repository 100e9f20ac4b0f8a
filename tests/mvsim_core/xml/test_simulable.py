"""Simulable tags (§1.13): init_pose / init_pose3d, init_vel, <publish>, keyframe <animation>."""

from __future__ import annotations

import math

import pytest

from mvsim_core.errors import WorldFileError
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.simulable import parse_simulable

R = math.radians


def spec(nodes, text, *, ctx=None, **kw):
    kw.setdefault("what", "block")
    kw.setdefault("name", "b")
    return parse_simulable(nodes(text), ctx or ParseContext(), **kw)


def test_init_pose_degrees_to_radians(nodes):
    s = spec(nodes, "<block><init_pose>1 2 90</init_pose></block>")
    assert s.pose == pytest.approx((1.0, 2.0, 0.0, math.pi / 2, 0.0, 0.0)) and not s.pose_is_3d
    assert (s.init_vel, s.publish_topic, s.publish_period, s.keyframes) == ((0.0, 0.0, 0.0), "", 0.1, [])
    assert not s.skip_elevation_adjust


def test_init_pose3d_wins_and_skip_elevation(nodes):
    s = spec(nodes, "<block><init_pose>9 9 9</init_pose><init_pose3d>1 2 3 90 10 -5</init_pose3d>"
                    "<skip_elevation_adjust/></block>")
    assert s.pose == pytest.approx((1.0, 2.0, 3.0, R(90), R(10), R(-5))) and s.pose_is_3d
    assert s.skip_elevation_adjust


def test_instance_node_first_then_class(nodes):
    s = spec(nodes, "<block><init_pose>1 0 0</init_pose></block>\n"
                    "<block:class><init_pose>5 5 5</init_pose><init_vel>2 0 0</init_vel></block:class>")
    assert s.pose[:2] == (1.0, 0.0) and s.init_vel == (2.0, 0.0, 0.0)


def test_init_vel_omega_in_deg_per_s(nodes):
    s = spec(nodes, "<block><init_pose>0 0 0</init_pose><init_vel>1 0.5 90</init_vel></block>")
    assert s.init_vel == pytest.approx((1.0, 0.5, math.pi / 2))


def test_pose_required_or_not(nodes):
    with pytest.raises(WorldFileError) as ei:
        spec(nodes, "<vehicle>\n<mass>1</mass></vehicle>", what="vehicle", name="v")
    assert ei.value.line == 1
    assert ei.value.message == "vehicle 'v' has no <init_pose>; add <init_pose>x y yaw_deg</init_pose>"
    assert spec(nodes, "<actor/>", pose_required=False).pose == (0.0,) * 6


def test_publish(nodes):
    s = spec(nodes, "<block><init_pose>0 0 0</init_pose><publish><publish_topic>/${NAME}/pose</publish_topic>"
                    "<publish_pose_period>0.25</publish_pose_period>"
                    "<publish_relative_pose_topic>rel</publish_relative_pose_topic>"
                    "<publish_relative_pose_objects>a  b c</publish_relative_pose_objects></publish></block>",
             name="box7")
    assert (s.publish_topic, s.publish_period) == ("/box7/pose", 0.25)
    assert (s.publish_relative_pose_topic, s.publish_relative_pose_objects) == ("rel", ("a", "b", "c"))


def test_publish_disabled_and_bad_enabled(nodes):
    s = spec(nodes, '<block><init_pose>0 0 0</init_pose><publish enabled="false"><publish_topic>/t</publish_topic>'
                    "<publish_pose_period>2</publish_pose_period></publish></block>")
    assert (s.publish_topic, s.publish_period) == ("", 0.1)
    with pytest.raises(WorldFileError) as ei:
        spec(nodes, '<block><init_pose>0 0 0</init_pose>\n<publish enabled="maybe"/></block>')
    assert ei.value.line == 2
    assert ei.value.message == "bad bool 'maybe' for enabled=\"...\" of <publish>; expected true, false, 1 or 0"


def test_keyframe_animation(nodes):
    s = spec(nodes, '<block><init_pose>0 0 0</init_pose><animation type="keyframes">'
                    "<time_pose>0 1 2 90</time_pose><time_pose3d>2.5 1 2 3 0 45 -90</time_pose3d>"
                    "<time_pose>4 0 0 -30</time_pose></animation></block>")
    assert [k.t for k in s.keyframes] == [0.0, 2.5, 4.0]
    assert s.keyframes[0].pose == pytest.approx((1, 2, 0, R(90), 0, 0))
    assert s.keyframes[1].pose == pytest.approx((1, 2, 3, 0, R(45), R(-90)))
    assert s.keyframes[2].pose == pytest.approx((0, 0, 0, R(-30), 0, 0))


@pytest.mark.parametrize(("frames", "line", "message"), [
    ("<time_pose>1 0 0 0</time_pose>\n<time_pose>0.5 0 0 0</time_pose>", 3,
     "keyframe times must increase (t=0.5 after t=1)"),
    ("<time_pose>1 0 0 0</time_pose>\n<time_pose>1 2 0 0</time_pose>", 3,
     "keyframe times must increase (t=1 after t=1)"),
    ("<time_pose>1 0 0</time_pose>", 2, "<time_pose> needs 4 numbers (t x y yaw), got 3"),
    ("<time_pose3d>1 0 0 0</time_pose3d>", 2, "<time_pose3d> needs 7 numbers (t x y z yaw pitch roll), got 4"),
])
def test_animation_errors(nodes, frames, line, message):
    with pytest.raises(WorldFileError) as ei:
        spec(nodes, f"<block><init_pose>0 0 0</init_pose><animation>\n{frames}</animation></block>")
    assert (ei.value.line, ei.value.message) == (line, message)


def test_animation_unknown_type_and_child(nodes):
    with pytest.raises(WorldFileError, match=r'unknown <animation type="spline">; the only type is keyframes'):
        spec(nodes, '<block><init_pose>0 0 0</init_pose><animation type="spline"/></block>')
    ctx = ParseContext()
    s = spec(nodes, "<block><init_pose>0 0 0</init_pose><animation>\n<pose>1</pose></animation></block>", ctx=ctx)
    assert s.keyframes == [] and ctx.warnings[0].endswith(":2: unknown tag <pose> in <animation> is ignored")
