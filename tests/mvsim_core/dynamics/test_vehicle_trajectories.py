"""Vehicle trajectories against upstream's own tests and against the C++ MVSim 1.2.0 recordings.

Upstream's test (reference §6): 1 s at dt = 1 ms from rest; command (1, 0, 0) ends at (1, 0, 0) and (1, 0, 1 rad/s)
at (sin 1, 1 − cos 1, 1) = (0.841, 0.459, 1.0). Ideal controllers are held to 0.01; the PID controllers' start-up
lag is physics, so they are held (0.03) to what the C++ MVSim 1.2.0 gives with upstream's test vehicles.

The differential test vehicle (wheels ±0.5 m, Ø 0.2 m, 1 kg; twist_pid KP 4, KI 3, max_torque 20; no damping) uses
the default friction. The Ackermann one (KP 1000, max_torque 300, max steer 60°, no damping) is taken with the
friction of upstream's car definitions (mu 0.7, C_damping 0.5): the PID saturates, so the start-up is friction
limited and mu decides it; with these values both runs land within 0.004 of the C++ figures.
"""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

import mvsim_core as mv

DIFF = """<vehicle name="v">
  <dynamics class="differential">
    <l_wheel pos="0 0.5" diameter="0.2" mass="1"/>
    <r_wheel pos="0 -0.5" diameter="0.2" mass="1"/>
    <chassis linear_damping="0" angular_damping="0"/>
    <controller class="{ctrl}"><KP>4</KP><KI>3</KI><max_torque>20</max_torque></controller>
  </dynamics>
  <init_pose>0 0 0</init_pose>
</vehicle>"""

ACKERMANN = """<vehicle name="v">
  <dynamics class="ackermann">
    <max_steer_ang_deg>60</max_steer_ang_deg>
    <chassis linear_damping="0" angular_damping="0"/>
    <controller class="{ctrl}"><KP>1000</KP><max_torque>300</max_torque></controller>
  </dynamics>
  <friction class="default"><mu>0.7</mu><C_damping>0.5</C_damping></friction>
  <init_pose>0 0 0</init_pose>
</vehicle>"""


def run(tmp_path, vehicle_xml: str, cmd: tuple[float, float, float], seconds: float = 1.0, dt: float = 0.001):
    (tmp_path / "w.xml").write_text(f'<mvsim_world version="1.0">\n<simul_timestep>{dt}</simul_timestep>\n'
                                    f'{vehicle_xml}\n</mvsim_world>\n')
    w = mv.load_world(tmp_path / "w.xml")
    v = w.vehicles["v"]
    v.set_twist(*cmd)
    w.run(seconds)
    x, y, _, yaw, _, _ = v.pose
    return x, y, yaw, w


CURVE = (math.sin(1.0), 1.0 - math.cos(1.0), 1.0)


@pytest.mark.parametrize("template", [DIFF, ACKERMANN], ids=["differential", "ackermann"])
def test_twist_ideal(tmp_path, template):
    x, y, yaw, _ = run(tmp_path, template.format(ctrl="twist_ideal"), (1.0, 0.0, 0.0))
    assert (x, y, yaw) == pytest.approx((1.0, 0.0, 0.0), abs=0.01)
    x, y, yaw, _ = run(tmp_path, template.format(ctrl="twist_ideal"), (1.0, 0.0, 1.0))
    assert (x, y, yaw) == pytest.approx(CURVE, abs=0.01)


# C++ MVSim 1.2.0 with upstream's test vehicles (reference §6)
PID_REFERENCE = {
    ("differential", "straight"): (0.8492, 0.0, 0.0),
    ("differential", "curve"): (0.7480, 0.3631, 0.8621),
    ("ackermann", "straight"): (0.8500, 0.0, 0.0),
    ("ackermann", "curve"): (0.7426, 0.3309, 0.8379),
}


@pytest.mark.parametrize(("template", "dyn", "ctrl"), [(DIFF, "differential", "twist_pid"),
                                                     (ACKERMANN, "ackermann", "twist_front_steer_pid")],
                         ids=["differential-twist_pid", "ackermann-twist_front_steer_pid"])
@pytest.mark.parametrize(("shape", "cmd"), [("straight", (1.0, 0.0, 0.0)), ("curve", (1.0, 0.0, 1.0))])
def test_pid_controllers_match_cpp(tmp_path, template, dyn, ctrl, shape, cmd):
    x, y, yaw, _ = run(tmp_path, template.format(ctrl=ctrl), cmd)
    ref = PID_REFERENCE[(dyn, shape)]
    print(f"{dyn}/{ctrl}/{shape}: ours ({x:.4f}, {y:.4f}, {yaw:.4f}) C++ {ref}")
    assert (x, y, yaw) == pytest.approx(ref, abs=0.03)


def test_reference_trajectory_small_robot(shared_dir):
    """The C++ MVSim 1.2.0 recording: our pose within 2 % of the path length at every 0.1 s row."""
    ref_dir = shared_dir / "reference-trajectories"
    rows = list(csv.DictReader(open(ref_dir / "ref_diff_small_robot.csv")))
    w = mv.load_world(ref_dir / "ref_diff_small_robot.world.xml")
    v = w.vehicles["r1"]
    dt = w.timestep
    assert dt == pytest.approx(0.005)
    ref = np.array([[float(r["t"]), float(r["x"]), float(r["y"]), float(r["yaw"])] for r in rows])
    path = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(ref[:, 1]), np.diff(ref[:, 2])))])
    errors = []
    steps_per_row = round(0.1 / dt)
    for k, (t, rx, ry, _ryaw) in enumerate(ref):
        if k > 0:
            for _ in range(steps_per_row):
                if w.time < 3.0 - 1e-9:
                    v.set_twist(1.0, 0.0, 0.0)
                else:
                    v.set_twist(0.5, 0.0, 0.5)
                w.step()
        assert w.time == pytest.approx(t, abs=1e-9)
        x, y = v.pose[0], v.pose[1]
        err = math.hypot(x - rx, y - ry)
        errors.append(err / max(path[k], 1e-9) if path[k] > 0.05 else 0.0)
        assert err <= 0.02 * max(path[k], 0.05), (t, x, y, rx, ry)
    print(f"reference trajectory: max position error = {max(errors) * 100:.2f} % of the path length "
          f"(final ours {v.pose[0]:.3f}, {v.pose[1]:.3f}, {v.pose[3]:.3f}; C++ 3.777, 1.689, 2.259)")
