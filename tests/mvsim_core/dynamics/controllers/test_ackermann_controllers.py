"""Ackermann controllers at run time: front_steer_pid and the drivetrain's twist_front_steer_pid."""

from __future__ import annotations

import math

import pytest

import mvsim_core as mv

CAR = """<mvsim_world version="1.0">
<simul_timestep>0.002</simul_timestep>
<vehicle name="car">
  <dynamics class="{dyn}">
    <rl_wheel/><rr_wheel/><fl_wheel/><fr_wheel/>
    <max_steer_ang_deg>40</max_steer_ang_deg>
    <chassis linear_damping="0" angular_damping="0"/>
    <controller class="{ctrl}"><KP>800</KP><KI>200</KI><max_torque>400</max_torque>{extra}</controller>
  </dynamics>
  <friction class="default"><mu>0.9</mu></friction>
  <init_pose>0 0 0</init_pose>
</vehicle>
</mvsim_world>
"""


def car(tmp_path, dyn, ctrl, extra=""):
    (tmp_path / "w.xml").write_text(CAR.format(dyn=dyn, ctrl=ctrl, extra=extra))
    return mv.load_world(tmp_path / "w.xml")


@pytest.mark.parametrize("dyn", ["ackermann", "ackermann_drivetrain"])
def test_front_steer_pid_follows_speed_and_steering(tmp_path, dyn):
    """V = 2 m/s, STEER_ANG = 10°: after settling, the speed is 2 m/s and the yaw rate v·tan(δ)/L (L = 1.3 m).

    The speed loop sees the rear-wheel encoders (as upstream), not ground truth: in the turn the free-rolling rear
    wheels lag slightly, so the true speed settles a few % above the command (5 % allowed)."""
    w = car(tmp_path, dyn, "front_steer_pid", "<V>2.0</V><STEER_ANG>10</STEER_ANG>")
    v = w.vehicles["car"]
    w.run(4.0)
    vx, vy, om = v.twist
    assert vx == pytest.approx(2.0, rel=0.05)
    assert om == pytest.approx(vx * math.tan(math.radians(10)) / 1.3, rel=0.05)
    assert v.controller.xml_class == "front_steer_pid"
    with pytest.raises(mv.ControllerError, match="vehicle 'car'"):
        v.set_twist(1, 0, 0)
    v.controller.set_command(0.0, 0.0)
    w.run(4.0)
    assert abs(v.twist[0]) < 0.05


def test_drivetrain_twist_pid_reaches_the_commanded_twist(tmp_path):
    """One speed PID into the torsen_4wd drivetrain: vx → 1.5 m/s and ω → 0.3 rad/s; every wheel gets torque."""
    w = car(tmp_path, "ackermann_drivetrain", "twist_front_steer_pid")
    v = w.vehicles["car"]
    v.set_twist(1.5, 0.0, 0.3)
    w.run(5.0)
    vx, _, om = v.twist
    assert vx == pytest.approx(1.5, abs=0.05)
    assert om == pytest.approx(0.3, abs=0.02)
    v.set_twist(1.5, 0.0, 0.0)
    w.step()
    assert all(t != 0.0 for t in v.torques)  # 4WD: the split reaches all four wheels
