"""<joint> (§1.4): types, anchors, length/angle parameters, and bodies that must be defined before the joint."""

from __future__ import annotations

import math

import pytest

import mvsim_core as mv
from mvsim_core.objects.joint import JointType, parse_joint
from mvsim_core.xml.context import ParseContext

BODIES = ('<block name="truck"><init_pose>0 0 0</init_pose></block>\n'
          '<block name="trailer"><init_pose>-3 0 0</init_pose></block>\n')


def test_distance_joint_defaults(load):
    w = load(BODIES + '<joint body_a="truck" body_b="trailer"/>')
    (j,) = w.joints
    assert (j.type, j.body_a, j.body_b) == (JointType.DISTANCE, "truck", "trailer")
    p = j.params
    assert (p.anchor_a, p.anchor_b, p.max_length, p.min_length) == ((0.0, 0.0), (0.0, 0.0), 5.0, 0.0)
    assert (p.stiffness, p.damping, p.enable_limit, p.lower_angle_deg, p.upper_angle_deg) == (0, 0, False, 0, 0)
    assert j.node.line == 4


def test_revolute_joint_with_limits(load):
    w = load(BODIES + '<joint type="revolute" body_a="truck" body_b="trailer" anchor_a="-1 0" anchor_b="0.5 0.2"\n'
                      ' enable_limit="true" lower_angle_deg="-30" upper_angle_deg="45"/>\n'
                      '<joint type="rope" body_a="trailer" body_b="truck" max_length="2.5" min_length="1"'
                      ' stiffness="10" damping="0.5"/>')
    rev, rope = w.joints
    assert rev.type is JointType.REVOLUTE and rev.params.enable_limit
    assert (rev.params.anchor_a, rev.params.anchor_b) == ((-1.0, 0.0), (0.5, 0.2))
    assert (rev.params.lower_angle_deg, rev.params.upper_angle_deg) == pytest.approx((-math.pi / 6, math.pi / 4))
    assert rope.type is JointType.ROPE and (rope.body_a, rope.body_b) == ("trailer", "truck")
    assert (rope.params.max_length, rope.params.min_length, rope.params.stiffness, rope.params.damping) == (
        2.5, 1.0, 10.0, 0.5)


def test_pin_joint_direct():
    from mvsim_core.xml.parser import parse_text

    node = parse_text('<joint type="pin" body_a="a" body_b="b" anchor_a="1 2"/>', file="j.xml")[0]
    j = parse_joint(node, ParseContext(), {"a", "b"})
    assert j.type is JointType.PIN and j.params.anchor_a == (1.0, 2.0) and j.node is node


@pytest.mark.parametrize(("joint", "line", "message"), [
    ('<joint body_a="truck"\n body_b="ghost"/>', 5, 'joint body_b="ghost" is not a vehicle or block defined before '
                                                    "this joint"),
    ('<joint type="weld"\n body_a="truck" body_b="trailer"/>', 4, "unknown joint type 'weld'; known: distance, "
                                                                  "rope, revolute, pin"),
    ('<joint\n body_b="trailer"/>', 4, '<joint> needs the attribute body_a="..."'),
    ('<joint body_a="truck" body_b="trailer"\n min_length="6"/>', 4, "joint min_length is larger than max_length"),
])
def test_errors(load, joint, line, message):
    with pytest.raises(mv.WorldFileError) as ei:
        load(BODIES + joint)
    assert (ei.value.line, ei.value.message) == (line, message)


def test_body_defined_after_joint_is_an_error(load):
    with pytest.raises(mv.WorldFileError) as ei:
        load('<block name="truck"><init_pose>0 0 0</init_pose></block>\n'
             '<joint body_a="truck" body_b="trailer"/>\n<block name="trailer"><init_pose>-3 0 0</init_pose></block>')
    assert ei.value.line == 3 and 'body_b="trailer" is not a vehicle or block' in ei.value.message


def test_joint_types_say_whether_they_limit_distance():
    from mvsim_core.objects.joint import JointType

    assert {t.value for t in JointType if t.limits_distance} == {"distance", "rope"}
    assert {t.value for t in JointType if not t.limits_distance} == {"revolute", "pin"}
