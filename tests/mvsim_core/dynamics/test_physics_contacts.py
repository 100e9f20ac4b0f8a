"""Contacts: walls and blocks stop or get pushed, joints hold trailers, and vehicles rest on sloped terrain with the
attitude of their wheel contacts (reference §2.1, §2.4, §1.4, §1.10, §6 test_drift_on_elevation).

Box2D 2.3 gives every polygon a 1 cm skin (``b2_polygonRadius``), so two touching polygons keep their outlines 2 cm
apart; the default differential chassis spans x ∈ [−0.4, 0.6] m (reference §1.11).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv

G = 9.81
SKIN = 0.02  # m between touching polygon outlines (2 × b2_polygonRadius)
CHASSIS_FRONT, CHASSIS_BACK = 0.6, -0.4


def make_world(tmp_path: Path, body: str, *, dt: float, name: str = "w.xml") -> mv.World:
    path = tmp_path / name
    path.write_text(f'<mvsim_world version="1.0">\n<simul_timestep>{dt}</simul_timestep>\n<gravity>{G}</gravity>\n'
                    f'{body}\n</mvsim_world>\n')
    return mv.load_world(path)


def robot(name: str, x: float, y: float = 0.0, *, ctrl: str = "twist_pid", extra: str = "") -> str:
    return (f'<vehicle name="{name}"><dynamics class="differential"><chassis linear_damping="0" angular_damping="0"/>'
            f'<controller class="{ctrl}"><KP>30</KP><max_torque>100</max_torque></controller></dynamics>{extra}'
            f'<init_pose>{x} {y} 0</init_pose></vehicle>\n')


# ---------------------------------------------------------------------------------------------- 7. walls and blocks
WALL_BLOCK = ('<block name="wall"><static>true</static><init_pose>0 0 0</init_pose>'
              '<shape><pt>3 -2</pt><pt>3.2 -2</pt><pt>3.2 2</pt><pt>3 2</pt></shape></block>')
WALL_SEGMENT = '<walls><wallThickness>0.2</wallThickness><shape><pt>3.1 -2</pt><pt>3.1 2</pt></shape></walls>'


@pytest.mark.parametrize("wall", [WALL_BLOCK, WALL_SEGMENT], ids=["static_block", "walls"])
def test_vehicle_stops_at_a_wall(tmp_path, wall):
    """A robot driven at 1.5 m/s towards a wall whose face is the plane x = 3 m: no chassis vertex ever passes it,
    the robot ends pressed against it (front 2 cm short: the skins), stopped, with ``had_collision`` latched."""
    w = make_world(tmp_path, robot("r", 0.0) + wall, dt=0.002)
    v = w.vehicles["r"]
    v.set_twist(1.5, 0.0, 0.0)
    fp = np.asarray(v.chassis.footprint, dtype=float)
    front = -math.inf
    for k in range(2000):
        w.step()
        x, y, _, yaw, _, _ = v.pose
        front = max(front, float(np.max(x + math.cos(yaw) * fp[:, 0] - math.sin(yaw) * fp[:, 1])))
        assert front <= 3.0, (w.time, front)
        if k == 250:  # 0.5 s: the front (≤ 0.6 + 0.75 m) is still far from the wall
            assert not v.had_collision
    assert front == pytest.approx(3.0 - SKIN, abs=0.005)
    assert v.had_collision and v.collision
    assert abs(v.twist[0]) < 0.01


def test_dynamic_block_is_pushed_static_block_is_not(tmp_path):
    """Robot r drives into a free 5 kg box (1 m square at x = 2; ground friction joints hold back
    μ·m·g = 0.5·5·9.81 = 24.5 N, far below the robot's traction 0.8·19·9.81 = 149 N): the box is pushed and stays
    in contact, its centre at robot x + 0.6 + 0.5 + 0.02. Robot r2 drives into a static 1 m square at (2, 3): it
    stops with its front at 1.5 − 0.02 m and the block's pose does not change by a single bit."""
    body = (robot("r", 0.0) + robot("r2", 0.0, 3.0) + '<block name="box"><mass>5</mass><init_pose>2 0 0</init_pose>'
            '</block><block name="pillar"><static>true</static><init_pose>2 3 0</init_pose></block>')
    w = make_world(tmp_path, body, dt=0.002)
    r, r2 = w.vehicles["r"], w.vehicles["r2"]
    box, pillar = w.blocks["box"], w.blocks["pillar"]
    pillar0 = pillar.pose
    r.set_twist(1.0, 0.0, 0.0)
    r2.set_twist(1.0, 0.0, 0.0)
    w.run(4.0)
    assert pillar.pose == pillar0 == (2.0, 3.0, 0.0, 0.0, 0.0, 0.0)
    assert box.pose[0] - 2.0 > 0.1
    assert box.pose[0] - r.pose[0] == pytest.approx(CHASSIS_FRONT + 0.5 + SKIN, abs=0.01)
    assert r2.pose[0] + CHASSIS_FRONT == pytest.approx(1.5 - SKIN, abs=0.01)
    assert r.had_collision and r2.had_collision and box.had_collision


TRAILER = ('<vehicle name="trailer"><dynamics class="differential"><chassis mass="10"/></dynamics>'
           '<friction class="default"><C_rr>0.01</C_rr></friction><init_pose>{x} 0 0</init_pose></vehicle>\n')


@pytest.mark.parametrize(("joint", "max_len"), [
    ('<joint type="distance" body_a="tractor" anchor_a="-0.5 0" body_b="trailer" anchor_b="0.7 0" max_length="0.5"/>',
     0.5),
    ('<joint type="revolute" body_a="tractor" anchor_a="-0.5 0" body_b="trailer" anchor_b="0.7 0"/>', 0.0),
], ids=["distance", "revolute"])
def test_trailer_follows_on_a_joint(tmp_path, joint, max_len):
    """A tractor (twist_pid, 1 m/s while turning at 0.3 rad/s) tows a passive raw trailer hitched 0.5 m behind its
    reference point to the trailer's point 0.7 m ahead of its own: the anchors never get further apart than the
    rope (0.5 m) or the pin (0 m) allows, + 1 cm, and the trailer is dragged > 1 m in 4 s."""
    w = make_world(tmp_path, robot("tractor", 0.0) + TRAILER.format(x=-1.2 - max_len) + joint, dt=0.002)
    a, b = w.vehicles["tractor"], w.vehicles["trailer"]
    b0 = b.pose
    a.set_twist(1.0, 0.0, 0.3)

    def anchor(pose, local_x):
        return pose[0] + math.cos(pose[3]) * local_x, pose[1] + math.sin(pose[3]) * local_x

    worst = 0.0
    for _ in range(2000):
        w.step()
        worst = max(worst, math.dist(anchor(a.pose, -0.5), anchor(b.pose, 0.7)))
    assert worst <= max_len + 0.01
    assert math.dist(b.pose[:2], b0[:2]) > 1.0


# ---------------------------------------------------------------------------------------------- 9. sloped terrain
# Upstream's tests/test_drift_on_elevation.cpp world (reference §6): heights at x = −8, −2, 4 (rows) × y = −8, −2, 4
# (columns), 6 m apart.
SLOPE_WORLD = """<element class="elevation_map">
  <resolution>6.0</resolution>
  <elevation_data_matrix>[1.0 0.0 -1.0; 1.5 0.0 -1.5; 1.0 0.0 -1.0]</elevation_data_matrix>
  <corner_min_x>-8</corner_min_x><corner_min_y>-8</corner_min_y>
</element>
<vehicle name="v">
  <dynamics class="differential_4_wheels">
    <lf_wheel pos="0.3  0.6" mass="1.0" width="0.03" diameter="0.20"/>
    <rf_wheel pos="0.3 -0.6" mass="1.0" width="0.03" diameter="0.20"/>
    <lr_wheel pos="-0.3  0.6" mass="1.0" width="0.03" diameter="0.20"/>
    <rr_wheel pos="-0.3 -0.6" mass="1.0" width="0.03" diameter="0.20"/>
    <chassis mass="10.0" zmin="0.05" zmax="0.25"/>
    <controller class="{ctrl}">{gains}</controller>
  </dynamics>
  {friction}
  <init_pose>{pose}</init_pose>
</vehicle>"""
PID_GAINS = "<KP>4</KP><KI>3</KI><KD>0</KD><max_torque>20</max_torque>"


FRICTIONS = {
    "default": '<friction class="default"><mu>0.8</mu><C_damping>0.05</C_damping></friction>',
    "wardiagnemma": '<friction class="wardiagnemma"><mu>0.8</mu><C_damping>0.05</C_damping></friction>',
    # peak coefficient C_s·slip_ratio_saturation = 0.75; at rest the floored tread speed makes the slip ratio ±1
    "ellipse": '<friction class="ellipse"><C_damping>0.05</C_damping></friction>',
}


def slope_world(tmp_path, ctrl: str, pose: str, friction: str = "default") -> mv.World:
    return make_world(tmp_path, SLOPE_WORLD.format(ctrl=ctrl, gains=PID_GAINS if ctrl != "raw" else "", pose=pose,
                                                   friction=FRICTIONS[friction]), dt=0.005)


# Around (−1, 2) every wheel (x ± 0.3, y ± 0.6) lies in the cell x ∈ [−2, 4], y ∈ [−2, 4], local (u, v) =
# ((x + 2)/6, (y + 2)/6) ∈ [0.12, 0.22] × [0.57, 0.77], i.e. in its upper triangle (v ≥ u), the plane through
# z(−2,−2) = 0, z(−2,4) = −1.5, z(4,4) = −1: gradient gx = ∂z/∂x = 0.5/6, gy = ∂z/∂y = −1.5/6, and
# z(−1, 2) = −1.5·4/6 + 0.5·1/6 = −0.91667 m. The fitted vehicle lies in that plane. With the terrain module's
# convention (R = Rz·Ry·Rx, positive pitch = nose down), heading h = (cos ψ, sin ψ) and left l = (−sin ψ, cos ψ):
# pitch = −atan(∇z·h), roll = atan2(∇z·l, sqrt(1 + (∇z·h)²)); z of the reference point = plane height under it
# (the wheel contacts are symmetric about it).
GX, GY = 0.5 / 6, -1.5 / 6


@pytest.mark.parametrize("yaw_deg", [0.0, 30.0])
def test_vehicle_rests_on_a_slope_with_the_attitude_of_its_wheel_contacts(tmp_path, yaw_deg):
    w = slope_world(tmp_path, "twist_ideal", f"-1 2 {yaw_deg}")
    v = w.vehicles["v"]
    w.run(0.5)
    x, y, z, yaw, pitch, roll = v.pose
    assert (x, y) == (-1.0, 2.0) and yaw == pytest.approx(math.radians(yaw_deg), abs=1e-7)  # Box2D keeps float32
    along, left = GX * math.cos(yaw) + GY * math.sin(yaw), -GX * math.sin(yaw) + GY * math.cos(yaw)
    assert z == pytest.approx(-1.5 * 4 / 6 + 0.5 / 6, abs=1e-9)
    assert pitch == pytest.approx(-math.atan(along), abs=1e-9)
    assert roll == pytest.approx(math.atan2(left, math.hypot(1.0, along)), abs=1e-9)
    if yaw_deg == 0.0:  # the numbers of the docstring above
        assert (z, pitch, roll) == pytest.approx((-0.916667, -0.083141, -0.244166), abs=1e-6)


def test_initial_pose_is_placed_on_the_terrain(tmp_path):
    """§1.13: unless <skip_elevation_adjust/>, the vehicle starts on the ground under (x, y): at (−1, 2) the plane
    height −0.91667 m, as soon as the simulation is set up (world.start(); before any step)."""
    w = slope_world(tmp_path, "twist_ideal", "-1 2 0")
    assert w.vehicles["v"].pose[2] == 0.0  # as declared, until the simulation starts
    w.start()  # builds the simulation
    assert w.vehicles["v"].pose[2] == pytest.approx(-1.5 * 4 / 6 + 0.5 / 6, abs=1e-6)
    assert w.time == 0.0



@pytest.mark.parametrize("friction", ["default", "wardiagnemma"])
@pytest.mark.parametrize("ctrl", [
    "twist_ideal",
    "twist_pid",
    "raw",
])
def test_no_drift_on_elevation(tmp_path, ctrl, friction):
    """Upstream's test_drift_on_elevation: zero command for 3 s at dt = 5 ms on the slopes above (μ 0.8 holds a
    slope of up to atan(0.8) = 38.7°; these are ≤ 15°): drift < 1 mm in x and y, < 0.01 rad in yaw. Friction must
    exactly balance the gravity component along the slope (it is built to: F = −G per wheel). Ellipse friction: the
    next test."""
    w = slope_world(tmp_path, ctrl, "0 0 0", friction)
    v = w.vehicles["v"]
    x0, y0, _, yaw0, _, _ = v.pose
    w.run(3.0)
    x, y, _, yaw, pitch, roll = v.pose
    assert pitch != 0.0 and roll != 0.0  # it does stand on the slope
    assert abs(x - x0) < 1e-3 and abs(y - y0) < 1e-3 and abs(yaw - yaw0) < 0.01, (x - x0, y - y0, yaw - yaw0)


@pytest.mark.parametrize("ctrl", ["twist_ideal", "twist_pid", "raw"])
@pytest.mark.parametrize("uphill", [True, False])
def test_no_drift_with_ellipse_friction_facing_along_the_slope(tmp_path, ctrl, uphill):
    """Ellipse friction holds a vehicle parked straight up or down the plane above (14.8°; peak coefficient 0.75):
    at rest the floored tread speed makes the slip ratio ±1, and the longitudinal limit left over holds the gravity
    component, as in the default model. Across a slope it cannot: at rest the slip angle is 0, and so is upstream's
    lateral limit (Fz·C_alpha·sat(α)), so the vehicle slides sideways (kept as upstream has it)."""
    yaw = math.degrees(math.atan2(GY, GX)) + (0.0 if uphill else 180.0)  # downhill is −∇z
    w = slope_world(tmp_path, ctrl, f"-1 2 {yaw}", "ellipse")  # on the single plane described above
    v = w.vehicles["v"]
    x0, y0, _, yaw0, _, _ = v.pose
    w.run(3.0)
    x, y, _, yaw1, pitch, roll = v.pose
    assert abs(pitch) == pytest.approx(math.atan(math.hypot(GX, GY)), abs=1e-6) and abs(roll) < 1e-6  # along it
    assert abs(x - x0) < 1e-3 and abs(y - y0) < 1e-3 and abs(yaw1 - yaw0) < 0.01, (x - x0, y - y0, yaw1 - yaw0)
