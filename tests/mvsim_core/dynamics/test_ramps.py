"""Drivable ramps and bumps (issue 16, Deliver 4): vehicles pass through their bodies and drive on their tops; the
high end of a ramp is a wall through the terrain-step rule; other bodies and lidars still meet them as solid.

The robot is upstream's ``small_robot`` (two wheels of 0.4 m on one axle, no caster in the model: it pitches on
its chassis ends, :func:`mvsim_core.dynamics.physics.support_points`). The ramp rises 0.3 m over 2 m from x = 1 to
x = 3 (its footprint's corner is its pose, as upstream's); a platform (a horizontal plane at 0.3 m) continues its
top.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv

LX, LZ = 2.0, 0.3
RAW_DYNAMICS = ('<dynamics class="differential">'  # small_robot's, with a raw torque controller
                '<l_wheel pos="0.0  0.5" mass="4.0" width="0.20" diameter="0.40"/>'
                '<r_wheel pos="0.0 -0.5" mass="4.0" width="0.20" diameter="0.40"/>'
                '<chassis mass="15.0" zmin="0.05" zmax="0.6"/><controller class="raw"/></dynamics>'
                '<friction class="default"><mu>0.05</mu><C_damping>0</C_damping><C_rr>0</C_rr></friction>')
SLOPE = math.atan(LZ / LX)


def world(tmp_path: Path, shared_dir: Path, *, intangible: bool = False, start: str = "-1 0 0",
          obstacle: str = "", platform: bool = True, ramp: bool = True, controller: str = "") -> mv.World:
    planes = ('<element class="horizontal_plane"><x_min>-10</x_min><x_max>10</x_max><z>0</z></element>'
              + ('<element class="horizontal_plane"><x_min>3</x_min><x_max>6</x_max><y_min>-1</y_min>'
                 '<y_max>1</y_max><z>0.3</z></element>' if platform else ""))
    veh = (f'<vehicle name="r" class="small_robot"><init_pose>{start}</init_pose>{controller}</vehicle>')
    ramp_block = (f'<block name="ramp"><static>true</static><intangible>{str(intangible).lower()}</intangible>'
                  f'<init_pose>1 -1 0</init_pose><geometry type="ramp" lx="{LX}" ly="2" lz="{LZ}"/></block>')
    path = tmp_path / "ramp.world.xml"
    path.write_text(f'''<mvsim_world version="1.0">
<include file="{shared_dir}/worlds/definitions/small_robot.vehicle.xml"/>
{planes}
{ramp_block if ramp else ""}
{obstacle}
{veh}
</mvsim_world>''')
    return mv.load_world(path).start()


def drive(w: mv.World, vx: float, seconds: float) -> np.ndarray:
    """Command ``vx`` (m/s) and step; rows t, x, y, z, yaw, pitch, roll."""
    v = w.vehicles["r"]
    v.controller.set_twist(vx, 0.0, 0.0)
    rows = []
    end = w.time + seconds
    while w.time < end - 1e-9:
        w.step()
        rows.append((w.time, *v.pose))
    return np.array(rows)


@pytest.mark.parametrize("intangible", [False, True])
def test_a_robot_climbs_the_ramp_onto_the_platform(tmp_path, shared_dir, intangible):
    w = world(tmp_path, shared_dir, intangible=intangible)
    rows = drive(w, 0.5, 12.0)
    x, z, pitch = rows[:, 1], rows[:, 3], rows[:, 5]
    half = np.argmin(np.abs(x - (1.0 + LX / 2)))
    assert x[half] == pytest.approx(2.0, abs=0.01)
    assert -pitch[half] == pytest.approx(SLOPE, abs=0.02)  # nose up (MVSim's positive pitch is nose down)
    assert z[half] == pytest.approx(LZ / 2, abs=0.02)
    top = np.argmin(np.abs(x - 4.0))  # on the platform, past the ramp's end
    assert x[top] == pytest.approx(4.0, abs=0.01)
    assert z[top] == pytest.approx(LZ, abs=0.02) and abs(pitch[top]) < 0.02
    assert x[-1] > 4.5  # it drove on at its speed: the ramp's body never stopped it
    assert not w.vehicles["r"].collision


def test_the_high_end_is_a_wall(tmp_path, shared_dir):
    """Coming from beyond the high end (without the platform there), the 0.3 m edge is higher than the terrain-step
    rule lets a 0.4 m wheel climb (0.55 diameters = 0.22 m): the robot stops against it."""
    w = world(tmp_path, shared_dir, start="5 0 180", platform=False)
    rows = drive(w, 0.5, 12.0)
    x = rows[:, 1]
    assert x[-1] > 3.0 and x[-1] == pytest.approx(x[-400], abs=0.005)  # stopped, on the floor side of the edge
    assert np.all(np.abs(rows[:, 3]) < 1e-9)


def test_driving_off_the_high_end_drops_to_the_floor(tmp_path, shared_dir):
    w = world(tmp_path, shared_dir, platform=False)
    rows = drive(w, 0.5, 12.0)
    assert rows[-1, 1] > 4.5 and rows[-1, 3] == pytest.approx(0.0, abs=1e-9) and rows[-1, 5] == 0.0


def test_gravity_pulls_a_free_robot_down_the_slope(tmp_path, shared_dir):
    """The slope force acts on every wheel: (chassis mass / 2 + wheel mass)·g·sin θ. MVSim's friction models spend
    what friction they have left on holding it (reference §2.3: a parked robot stays on a slope its μ can hold),
    so with μ = 0.05 < tan θ and free wheels (zero torque) the robot slides down at about g·(sin θ − μ)."""
    w = world(tmp_path, shared_dir, start="2 0 0", controller=RAW_DYNAMICS)
    v = w.vehicles["r"]
    v.controller.set_torques([0.0, 0.0])
    rows = []
    while w.time < 1.0:
        w.step()
        rows.append((w.time, *v.pose, v.twist[0]))
    rows = np.array(rows)
    assert -rows[10, 5] == pytest.approx(SLOPE, abs=0.02)
    t, vx = rows[:, 0], rows[:, -1]
    accel = np.polyfit(t[40:], vx[40:], 1)[0]
    assert accel == pytest.approx(-w.physics.gravity * (math.sin(SLOPE) - 0.05), rel=0.1)
    assert rows[-1, 1] < 1.8 and rows[-1, 3] < rows[0, 3] - 0.02  # down the ramp, lower


def test_bump_lifts_and_lowers(tmp_path, shared_dir):
    """A semi-cylinder bump 0.08 m high and 0.4 m wide, running along x over [0, 3] at y = 0; the robot crosses it
    along +y with both wheels at once."""
    bump = ('<block name="bump"><static>true</static><init_pose>0 0 0</init_pose>'
            '<geometry type="semi_cylinder_bump" lx="3" ly="0.4" lz="0.08"/></block>')
    w = world(tmp_path, shared_dir, obstacle=bump, start="1.5 -2 90", platform=False, ramp=False)
    rows = drive(w, 0.5, 8.0)
    y, z = rows[:, 2], rows[:, 3]
    assert z.max() == pytest.approx(0.08, abs=0.005)
    assert y[np.argmax(z)] == pytest.approx(0.0, abs=0.1)
    assert z[0] == pytest.approx(0.0, abs=1e-9) and z[-1] == pytest.approx(0.0, abs=1e-9)
    assert y[-1] > 1.0


def test_other_bodies_and_lidars_meet_the_ramp(tmp_path, shared_dir):
    crate = ('<block name="crate"><mass>5</mass><init_pose>-0.5 0 0</init_pose><init_vel>2 0 0</init_vel>'
             '<shape><pt>-0.2 -0.2</pt><pt>0.2 -0.2</pt><pt>0.2 0.2</pt><pt>-0.2 0.2</pt></shape>'
             '<zmax>0.3</zmax><ground_friction>0</ground_friction></block>')
    w = world(tmp_path, shared_dir, obstacle=crate, start="-4 3 0")
    for _ in range(int(2.0 / w.timestep)):
        w.step()
    assert w.blocks["crate"].pose[0] < 1.0 - 0.2 + 0.01  # stopped by the ramp's body
    fixtures = w.physics.bodies.block_bodies["ramp"].fixtures
    assert all(f.filterData.maskBits & 0x0002 == 0 for f in fixtures)  # vehicles pass


def test_one_axle_robots_rest_on_their_chassis_ends(tmp_path, shared_dir):
    w = world(tmp_path, shared_dir)
    sup = w.physics.supports
    fp = np.asarray(w.vehicles["r"].chassis.footprint)
    assert sup.rows.tolist() == [0]
    np.testing.assert_allclose(sup._ends[0], [fp[:, 0].max(), fp[:, 0].min()])
    np.testing.assert_allclose(sup._axle[0], [0.0, 0.0])
