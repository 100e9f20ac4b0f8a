"""Wheels that slip: the exact spin update of :mod:`mvsim_core.dynamics.friction.slip`, and the Jackal on ice.

The ice case is ``jackal_pid_ice`` of ``../shared/reference-trajectories/cpp-1.2.0`` (twist_pid on a friction_mu = 0.15
region, 1 m/s for 4 s then stop), where the C++ MVSim 1.2.0 engine moves the Jackal 1.9 cm in 7 s with its wheels
spinning backwards. Acceptance (issue 15), with the default, Ward-Iagnemma and ellipse friction: the Jackal reaches
0.9 m/s, the ground never accelerates it by more than 1.05·μ·g, a slipping wheel always slides the way its torque
turns it, and after the stop it comes to rest.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.dynamics.friction.slip import slipping_wheel

MU = 0.15
G = 9.81
DT = 0.005


# ---------------------------------------------------------------------------------------------- the update itself
def _integrate(omega: float, t_eff: float, k: float, iyy: float, radius: float, f: float, dt: float,
               n: int = 200_000) -> float:
    """The spin after dt of I·dω/dt = T − R·F − k·(ω − ω₀), by many small explicit steps."""
    h = dt / n
    w = omega
    for _ in range(n):
        w += h * (t_eff - radius * f - k * (w - omega)) / iyy
    return w


@pytest.mark.parametrize(("omega", "vwx", "t_eff", "k"), [
    (0.0, 0.0, 20.0, 2.0),     # the Jackal's first step on ice: 20 N·m against a 5 N limit
    (10.0, 0.3, 1.0, 2.0),     # spinning ahead of the ground under a small torque
    (1.0, 0.9, -19.5, 2.0),    # the stop: braking torque, the wheel drops below the ground speed
    (0.0, 0.0, 20.0, 0.0),     # no feedback, no damping: the explicit update is exact
])
def test_a_slipping_wheel_follows_the_exact_solution_of_its_spin_equation(omega, vwx, t_eff, k):
    iyy, radius, limit = 0.005, 0.1, 5.15
    f, w = slipping_wheel(omega, vwx, t_eff, k, iyy, radius, DT, limit)
    assert abs(f) == pytest.approx(limit)  # all these saturate
    assert w == pytest.approx(_integrate(omega, t_eff, k, iyy, radius, f, DT), rel=1e-5, abs=1e-9)
    # the tread slides the way the force pushes the vehicle: forward force <=> wheel ahead of the ground
    assert (w * radius - vwx) * f > 0.0


def test_a_wheel_that_can_reach_rolling_within_the_step_rolls():
    """0.1 N·m on a wheel 0.01 rad/s behind the ground: below the limit, it ends the step rolling."""
    radius = 0.1
    f, w = slipping_wheel(9.99, 1.0, 0.1, 2.0, 0.005, radius, DT, 5.15)
    assert w == pytest.approx(1.0 / radius, abs=1e-12)
    assert abs(f) < 5.15


def test_feedback_never_makes_the_spin_overshoot():
    """Whatever the gain, the spin stays between where it starts and where the torque would settle it
    (ω₀ + (T − R·F)/k): no step can flip the sign of the error the loop is correcting (the C++ engine's ice freeze
    has a loop gain of 2.0 per step, which makes the spin flip every step)."""
    rng = np.random.default_rng(4)
    for _ in range(2000):
        omega, vwx, t_eff = rng.uniform(-20, 20), rng.uniform(-2, 2), rng.uniform(-50, 50)
        k, iyy, limit = 10.0 ** rng.uniform(-3, 3), 10.0 ** rng.uniform(-4, 0), rng.uniform(0.0, 50.0)
        f, w = slipping_wheel(omega, vwx, t_eff, k, iyy, 0.1, DT, limit)
        settle = omega + (t_eff - 0.1 * f) / k
        assert min(omega, settle) - 1e-9 <= w <= max(omega, settle) + 1e-9
        assert abs(f) <= limit + 1e-12


# ---------------------------------------------------------------------------------------------- the Jackal on ice
FRICTION = {
    "default": None,  # the Jackal's own <friction class="default"> (mu 0.8, overridden to 0.15 by the region)
    "wardiagnemma": '<friction class="wardiagnemma"><mu>0.8</mu><C_damping>0.05</C_damping><C_rr>0.01</C_rr>'
                    '</friction>',
    # no mu: the peak longitudinal and lateral coefficients C_s·slip_ratio_saturation and
    # C_alpha·slip_angle_saturation are set to 0.15
    "ellipse": '<friction class="ellipse"><C_damping>0.05</C_damping><C_rr>0.01</C_rr><C_s>1.5</C_s>'
               '<C_alpha>1.5</C_alpha><slip_ratio_saturation>0.1</slip_ratio_saturation>'
               '<slip_angle_saturation>0.1</slip_angle_saturation></friction>',
}


@pytest.fixture(scope="module")
def ref_dir(shared_dir: Path) -> Path:
    return shared_dir / "reference-trajectories" / "cpp-1.2.0"


def ice_world(ref_dir: Path, tmp_path: Path, friction: str | None) -> Path:
    """``jackal_pid_ice.world.xml``, or a copy whose Jackal has the given ``<friction>`` element."""
    src = ref_dir / "worlds" / "jackal_pid_ice.world.xml"
    if friction is None:
        return src
    text = src.read_text()
    defs = (ref_dir / "worlds" / "../../../worlds/definitions").resolve()
    text = text.replace('file="../../../worlds/definitions/', f'file="{defs}/')
    text = text.replace("<init_pose>0 0 0</init_pose></vehicle>", f"<init_pose>0 0 0</init_pose>{friction}</vehicle>")
    assert friction in text
    out = tmp_path / "jackal_ice.world.xml"
    out.write_text(text)
    return out


def run_ice(path: Path, seconds: float = 7.0) -> dict[str, np.ndarray]:
    """1 m/s for 4 s then 0, every 5 ms step: time, pose, body vx and wheel spins after the step; the wheel torques
    (positive drives forward) during it, and the speed of each wheel's centre along it when the step began (the
    speed the wheel's spin update rolls against)."""
    w = mv.load_world(path)
    w.start()
    v = w.vehicles["r1"]
    rows: dict[str, list] = {k: [] for k in ("t", "x", "y", "yaw", "vx", "omega", "tau", "vwx")}
    n = round(seconds / DT)
    for _ in range(n):
        v.set_twist(1.0 if w.time < 4.0 - 1e-9 else 0.0, 0.0, 0.0)
        w.step()
        x, y, _, yaw, _, _ = v.pose
        for k, val in (("t", w.time), ("x", x), ("y", y), ("yaw", yaw), ("vx", v.twist[0]), ("omega", v.omega.copy()),
                       ("tau", -v.torques), ("vwx", w.physics.wheels.vx.copy())):
            rows[k].append(val)
    out = {k: np.array(val) for k, val in rows.items()}
    out["linear_damping"] = np.array(v.chassis.linear_damping)
    out["radius"] = np.array([wh.radius for wh in v.wheels])
    return out


@pytest.mark.parametrize("model", sorted(FRICTION))
def test_the_jackal_on_ice_slips_accelerates_at_mu_g_and_stops(ref_dir, tmp_path, model):
    r = run_ice(ice_world(ref_dir, tmp_path, FRICTION[model]))
    t, vx = r["t"], r["vx"]
    drive = t <= 4.0 + 1e-9
    # reaches 0.9 m/s while commanded 1 m/s (the C++ engine: 1.9 cm in all)
    assert vx[drive].max() >= 0.9
    reach = float(t[np.argmax(vx >= 0.9)])
    # the ground's acceleration: Box2D's linear damping (v ← v/(1 + dt·c) each step, 0.1 1/s on the Jackal) taken
    # out, since it is not friction
    c = float(r["linear_damping"])
    v_prev = np.concatenate([[0.0], vx[:-1]])
    a_ground = (vx * (1.0 + DT * c) - v_prev) / DT
    assert np.abs(a_ground).max() <= 1.05 * MU * G
    # as measured: speeding up never beyond mu·g, braking at most mu·g plus the damping
    a = np.diff(np.concatenate([[0.0], vx])) / DT
    assert a.max() <= 1.05 * MU * G
    assert a.min() >= -(1.05 * MU * G + c * 1.0)
    # it takes the time mu·g allows (1 m/s at 1.47 m/s² is 0.68 s), not much more
    assert 0.9 / (MU * G) <= reach <= 1.5 * 0.9 / (MU * G)
    # a slipping wheel slides the way its torque turns it, and never spins backwards while driven forwards
    slip = r["omega"] * r["radius"] - r["vwx"]
    tau = r["tau"]
    slipping = (np.abs(slip) > 1e-3) & (np.abs(tau) > 1e-9)
    assert slipping[drive].any()
    assert np.all(np.sign(slip[slipping]) == np.sign(tau[slipping]))
    assert r["omega"][drive].min() >= 0.0
    # after the stop command it comes to rest within 1.5 s, wheels too, and stays
    rest = t >= 5.5
    assert np.abs(vx[rest]).max() < 1e-3
    assert np.abs(r["omega"][rest]).max() < 1e-2
    assert r["x"][-1] - r["x"][np.argmax(rest)] < 1e-3
    # straight all along
    assert np.abs(r["y"]).max() < 1e-6 and np.abs(r["yaw"]).max() < 1e-6
    print(f"{model}: 0.9 m/s at t = {reach:.3f} s, largest ground acceleration {np.abs(a_ground).max():.4f} m/s² "
          f"(mu·g = {MU * G:.4f}), stopped at x = {r['x'][-1]:.3f} m")


ICE_REGION = ('<element class="property_region"><property_name>friction_mu</property_name>'
              '<value_double>0.15</value_double><x_min>-40</x_min><y_min>-40</y_min><z_min>-1</z_min><x_max>40</x_max>'
              '<y_max>40</y_max><z_max>2</z_max></element>')


@pytest.mark.parametrize("world", ["car_ackermann", "car_drivetrain", "pickup"])
def test_the_cars_on_ice_reach_the_speed_and_stop(ref_dir, tmp_path, world):
    """The Ackermann controllers set no k_motor (their feedback is the rear wheels' odometry): on the same ice their
    loops stay stable, the ground pushes them at most mu·g, and they stop (the drivetrain car, slowest, by 8 s)."""
    text = (ref_dir / "worlds" / f"{world}.world.xml").read_text()
    defs = (ref_dir / "../../worlds/definitions").resolve()
    text = text.replace('file="../../../worlds/definitions/', f'file="{defs}/')
    text = text.replace('<include file="car_drivetrain.vehicle.xml"', f'<include file="{ref_dir}/worlds/'
                                                                       f'car_drivetrain.vehicle.xml"')
    text = text.replace('<include file="pickup_local.vehicle.xml"', f'<include file="{ref_dir}/worlds/'
                                                                   f'pickup_local.vehicle.xml"')
    text = text.replace("</element>", "</element>" + ICE_REGION, 1)
    path = tmp_path / f"{world}_ice.world.xml"
    path.write_text(text)
    r = run_ice(path, seconds=9.0)
    t, vx = r["t"], r["vx"]
    assert vx[t <= 4.0].max() >= 0.9
    c = float(r["linear_damping"])
    a_ground = (vx * (1.0 + DT * c) - np.concatenate([[0.0], vx[:-1]])) / DT
    assert np.abs(a_ground).max() <= 1.05 * MU * G
    assert np.abs(vx[t >= 8.0]).max() < 1e-3
    assert np.abs(r["y"]).max() < 1e-6


def test_the_cpp_engine_freezes_there(ref_dir):
    """The recording this fixes: the C++ engine's Jackal does not get anywhere, its wheels spinning backwards."""
    with open(ref_dir / "jackal_pid_ice.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert float(rows[-1]["t"]) == pytest.approx(7.0)
    assert max(abs(float(r["x"])) for r in rows) < 0.02
    assert min(float(r["wheel_w0"]) for r in rows) < -40.0


def test_the_same_ice_run_twice_is_bit_identical(ref_dir):
    a = run_ice(ref_dir / "worlds" / "jackal_pid_ice.world.xml", seconds=1.0)
    b = run_ice(ref_dir / "worlds" / "jackal_pid_ice.world.xml", seconds=1.0)
    for k in ("x", "vx", "omega"):
        assert np.array_equal(a[k], b[k])
    assert math.isfinite(float(a["x"][-1]))


def test_upstreams_friction_zones_world_is_drivable_across_the_ice_and_the_sand(shared_dir):
    """``demo_friction_zones.world.xml`` (the Jackal, twist_pid; ice mu 0.15 on x -7..1, sand C_rr 0.08 on x 3..7,
    both across y -2..2): placed on the ice at (-5, 0) facing +x and commanded 1 m/s, the Jackal pulls away at mu·g,
    crosses the ice, the grass and the sand at the commanded speed and leaves the sand within 13 s."""
    w = mv.load_world(shared_dir / "worlds" / "mvsim_tutorial" / "demo_friction_zones.world.xml")
    w.set_pose("robot", -5.0, 0.0, 0.0)
    v = w.vehicles["robot"]
    speeds, xs = [], []
    while w.time < 13.0 - 1e-9:
        v.set_twist(1.0, 0.0, 0.0)
        w.step()
        speeds.append(v.twist[0])
        xs.append(v.pose[0])
    vx, x = np.array(speeds), np.array(xs)
    a = np.diff(np.concatenate([[0.0], vx])) / w.timestep
    assert a[:20].mean() == pytest.approx(MU * G, rel=0.05)  # pulling away on the ice
    assert a.max() <= 1.05 * MU * G
    on_ice = x < 1.0
    assert vx[on_ice].max() >= 0.95
    sand = (x > 3.5) & (x < 6.5)
    assert vx[sand].min() >= 0.9  # twist_pid holds the speed against the sand's rolling resistance
    assert x[-1] > 7.0
