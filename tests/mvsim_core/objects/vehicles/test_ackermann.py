"""Ackermann dynamics classes (§1.11): ackermann and ackermann_drivetrain — wheels, chassis defaults, the front axle
placed by f_wheels_x / f_wheels_d, steering limit, drivetrain type and parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.dynamics.controllers.base import Family
from mvsim_core.dynamics.differentials import DifferentialKind
from mvsim_core.objects.vehicles.ackermann_drivetrain import DrivetrainType

CHASSIS = [[-0.8, -1.0], [-0.8, 1.0], [1.5, 0.9], [1.8, 0.8], [1.8, -0.8], [1.5, -0.9]]
WHEELS = "<rl_wheel/><rr_wheel/><fl_wheel/><fr_wheel/>"


def car(dclass, dyn="", body=""):
    return f'<vehicle name="c"><dynamics class="{dclass}">{dyn}</dynamics><init_pose>0 0 0</init_pose>{body}</vehicle>'


@pytest.mark.parametrize("dclass", ["ackermann", "ackermann_drivetrain"])
def test_defaults(load, dclass):
    w = load(car(dclass))
    v = w.vehicles["c"]
    assert [(x.name, x.x, x.y) for x in v.wheels] == [("rl_wheel", 0.0, 0.9), ("rr_wheel", 0.0, -0.9),
                                                      ("fl_wheel", 1.3, 1.0), ("fr_wheel", 1.3, -1.0)]
    c = v.chassis
    assert (c.mass, c.zmin, c.zmax, c.color) == (500.0, 0.2, 1.4, (0xE8, 0x30, 0x00, 255))
    assert c.footprint.tolist() == CHASSIS and type(v.dynamics).family is Family(dclass)
    p = v.dynamics.params
    assert (p.max_steer_ang_deg, p.f_wheels_x, p.f_wheels_d) == (pytest.approx(math.radians(30)), 1.3, 2.0)
    assert [m.split(": ", 1)[1] for m in w.warnings] == [
        f'<dynamics class="{dclass}"> has no <{n}>; using the default wheel'
        for n in ("rl_wheel", "rr_wheel", "fl_wheel", "fr_wheel")]


def test_front_axle_overwritten_by_f_wheels(load):
    v = load(car("ackermann", '<rl_wheel pos="-0.1 0.7"/><rr_wheel pos="-0.1 -0.7"/><fl_wheel pos="9 9 5"/>'
                              "<fr_wheel/><f_wheels_x>2.5</f_wheels_x><f_wheels_d>1.5</f_wheels_d>"
                              "<max_steer_ang_deg>35</max_steer_ang_deg>")).vehicles["c"]
    assert [(x.x, x.y) for x in v.wheels] == [(-0.1, 0.7), (-0.1, -0.7), (2.5, 0.75), (2.5, -0.75)]
    assert v.wheels[2].yaw == pytest.approx(math.radians(5))  # only the position is replaced
    assert v.dynamics.params.max_steer_ang_deg == pytest.approx(math.radians(35))


def test_plain_ackermann_ignores_drivetrain_silently(load):
    w = load(car("ackermann", WHEELS + '<drivetrain type="open_front"/>'))
    assert w.warnings == [] and not hasattr(w.vehicles["c"].dynamics, "drivetrain")


def test_drivetrain_default(load):
    d = load(car("ackermann_drivetrain", WHEELS)).vehicles["c"].dynamics
    assert d.drivetrain is DrivetrainType.TORSEN_4WD
    assert dict(d.drivetrain_params) == {"front_rear_split": 0.5, "front_rear_bias": 1.5, "front_left_right_split": 0.5,
                                         "front_left_right_bias": 1.5, "rear_left_right_split": 0.5,
                                         "rear_left_right_bias": 1.5}


@pytest.mark.parametrize("dtype", [t.value for t in DrivetrainType])
def test_drivetrain_types(load, dtype):
    d = load(car("ackermann_drivetrain", WHEELS + f'<drivetrain type="{dtype}"><front_rear_split>0.3'
                                                  "</front_rear_split><rear_left_right_bias>2</rear_left_right_bias>"
                                                  "</drivetrain>")).vehicles["c"].dynamics
    assert d.drivetrain.value == dtype and d.drivetrain is DrivetrainType.from_string(dtype)
    assert (d.drivetrain_params.front_rear_split, d.drivetrain_params.rear_left_right_bias) == (0.3, 2.0)
    assert d.drivetrain_params.front_left_right_split == 0.5


@pytest.mark.parametrize(("drivetrain", "line", "message"), [
    ('<drivetrain\n type="diff"/>', 3, "unknown drivetrain type 'diff'; known: open_front, open_rear, open_4wd, "
                                       "torsen_front, torsen_rear, torsen_4wd"),
    ("<drivetrain>\n<rear_left_right_split>1.5</rear_left_right_split></drivetrain>", 3,
     "<rear_left_right_split> is a fraction between 0 and 1 (got 1.5)"),
    ("<drivetrain>\n<front_rear_bias>0.5</front_rear_bias></drivetrain>", 3,
     "<front_rear_bias> must be at least 1 (got 0.5)"),
])
def test_drivetrain_errors(load, drivetrain, line, message):
    with pytest.raises(mv.WorldFileError) as ei:
        load(car("ackermann_drivetrain", WHEELS + drivetrain))
    assert (ei.value.line, ei.value.message) == (line, message)


def test_drivetrain_unknown_child_warns(load):
    w = load(car("ackermann_drivetrain", WHEELS + "<drivetrain>\n<center_split>1</center_split></drivetrain>"))
    assert w.warnings == [f"{w.path}:3: unknown tag <center_split> in <drivetrain> is ignored"]


# ---------------------------------------------------------------------- DrivetrainType carries its behaviour
def test_drivetrain_from_string_unknown_lists_known():
    with pytest.raises(ValueError, match=r"^unknown drivetrain type 'awd'; known: open_front, open_rear, open_4wd, "
                                         r"torsen_front, torsen_rear, torsen_4wd$"):
        DrivetrainType.from_string("awd")


@pytest.mark.parametrize("dtype", list(DrivetrainType))
def test_drivetrain_members_match_their_names(dtype):
    kind, axles = dtype.value.split("_")
    assert dtype.differential is DifferentialKind.from_string(kind)
    assert dtype.front_rear == {"front": (1.0, 0.0), "rear": (0.0, 1.0), "4wd": None}[axles]


PARAMS = {"front_rear_split": 0.4, "front_rear_bias": 1.5, "front_left_right_split": 0.5,
          "front_left_right_bias": 1.5, "rear_left_right_split": 0.5, "rear_left_right_bias": 1.5}


@pytest.mark.parametrize("dtype", list(DrivetrainType))
def test_wheel_torques_of_each_type(dtype):
    omega = np.array([10.0, 10.0, 30.0, 10.0])  # rl, rr, fl (spinning), fr
    t_rl, t_rr, t_fl, t_fr = dtype.wheel_torques(-100.0, omega, PARAMS)
    assert t_rl + t_rr + t_fl + t_fr == pytest.approx(-100.0)
    axles = dtype.value.split("_")[1]
    assert (t_fl == 0.0 and t_fr == 0.0) == (axles == "rear")
    assert (t_rl == 0.0 and t_rr == 0.0) == (axles == "front")
    if axles == "rear":
        return
    if dtype.differential is DifferentialKind.OPEN:
        assert t_fl == pytest.approx(t_fr)  # split 0.5 whatever the spins
    else:
        # fl spins at 30 rad/s > 1.5 · 10: Δ = (30 − 15)/30 = 0.5, so fl gets 0.5·0.5, the gripping fr 0.5·1.5
        assert t_fr == pytest.approx(3.0 * t_fl)


def test_set_drive_torque_writes_the_wheel_torques(load):
    v = load(car("ackermann_drivetrain", WHEELS + '<drivetrain type="open_4wd"><front_rear_split>0.25'
                                                  "</front_rear_split></drivetrain>")).vehicles["c"]
    v.torques = np.zeros(4)
    v.omega = np.zeros(4)
    v.dynamics.set_drive_torque(v, -8.0)
    assert v.torques.tolist() == [-3.0, -3.0, -1.0, -1.0]  # rl, rr, fl, fr
