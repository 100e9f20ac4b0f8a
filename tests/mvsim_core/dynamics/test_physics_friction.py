"""Wheel-ground friction, traction, rolling resistance, differentials and steering, checked against the formulas of
reference §2.2/§2.3 and the physics notes (seeds/001): every expected number below is derived in a comment.

Shared facts used throughout (reference §2.1, §2.2):

* wheel load mass m = chassis_mass/n + wheel_mass; Coulomb limit per wheel F_max = μ·m·g;
* Box2D mass of a vehicle M = chassis_mass + Σ wheel_mass = Σ m (so μ·g is the friction-limited acceleration);
* wheel spin inertia I = m_w·R²/2 by default; a rolling wheel that the ground accelerates at a costs I·a/R² of force;
* torques: negative drives forward (upstream's sign).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv

G = 9.81


def make_world(tmp_path: Path, body: str, *, dt: float, name: str = "w.xml") -> mv.World:
    """A world file holding ``body`` (vehicles, elements), gravity 9.81 and a fixed step ``dt``, loaded."""
    path = tmp_path / name
    path.write_text(f'<mvsim_world version="1.0">\n<simul_timestep>{dt}</simul_timestep>\n<gravity>{G}</gravity>\n'
                    f'{body}\n</mvsim_world>\n')
    return mv.load_world(path)


def friction_region(mu: float, x: tuple[float, float], y: tuple[float, float]) -> str:
    return (f'<element class="property_region"><property_name>friction_mu</property_name>'
            f'<value_double>{mu}</value_double><x_min>{x[0]}</x_min><x_max>{x[1]}</x_max>'
            f'<y_min>{y[0]}</y_min><y_max>{y[1]}</y_max><z_min>-1</z_min><z_max>1</z_max></element>')


# default differential robot: chassis 15 kg, wheels 2 kg, Ø 0.4 m at y = ±0.5 (reference §1.11)
DIFF_ROBOT = """<vehicle name="r">
  <dynamics class="differential">
    <chassis linear_damping="0" angular_damping="0"/>
    {controller}
  </dynamics>
  {friction}
  <init_pose>{x} 0 0</init_pose>{extra}
</vehicle>"""
M_DIFF, M_WHEEL, R_WHEEL = 15.0 + 2 * 2.0, 2.0, 0.2
I_WHEEL = 0.5 * M_WHEEL * R_WHEEL ** 2  # 0.04 kg·m²
M_LOAD_DIFF = 15.0 / 2 + M_WHEEL  # 9.5 kg per wheel


def diff_robot(*, controller: str = "", friction: str = '<friction class="default"><C_damping>0</C_damping></friction>',
               x: float = 0.0, extra: str = "") -> str:
    return DIFF_ROBOT.format(controller=controller, friction=friction, x=x, extra=extra)


# ---------------------------------------------------------------------------------------------- 1. Coulomb limit
CAR_TURN = """<vehicle name="car">
  <dynamics class="ackermann">
    <chassis linear_damping="0" angular_damping="0"/>
    <controller class="raw"><steer_ang_deg>30</steer_ang_deg></controller>
  </dynamics>
  <friction class="{model}"><mu>0.8</mu></friction>
  <init_pose>0 0 0</init_pose><init_vel>10 0 0</init_vel>
</vehicle>"""


@pytest.mark.parametrize("model", ["default", "wardiagnemma"])
def test_lateral_friction_never_exceeds_mu_n_in_a_hard_turn(tmp_path, model):
    """A 500 kg car entering a 30° turn at 10 m/s without torque: it slides (lateral demand m·v_y/dt is far above the
    grip), and every wheel's lateral force stays at or below μ·N with N = (500/4 + 2)·g = 1245.87 N."""
    w = make_world(tmp_path, CAR_TURN.format(model=model), dt=0.005)
    wh = w.start().physics.wheels
    wh.omega[:] = 10.0 / 0.2  # wheels already rolling at 10 m/s (R = 0.2 m)
    limit = 0.8 * (500.0 / 4 + 2.0) * G
    peak = np.zeros(4)
    for _ in range(300):
        w.step()
        # vehicle-frame force -> wheel frame: lateral = −sin(yaw)·fx + cos(yaw)·fy
        lateral = -np.sin(wh.yaw) * wh.fx + np.cos(wh.yaw) * wh.fy
        assert np.all(np.abs(lateral) <= limit + 1e-9), (w.time, lateral, limit)
        peak = np.maximum(peak, np.abs(lateral))
    # the turn is hard enough that every wheel reaches the limit (the check above is not vacuous)
    assert peak == pytest.approx(np.full(4, limit), rel=1e-9)
    assert abs(w.vehicles["car"].twist[1]) > 1.0  # and the car really slides sideways


# ---------------------------------------------------------------------------------------------- 2. traction and slip
@pytest.mark.parametrize(("torque", "slips"), [(30.0, True), (1.0, False)])
def test_torque_beyond_traction_spins_the_wheels(tmp_path, torque, slips):
    """Traction limit per wheel: μ·m·g = 0.8·9.5·9.81 = 74.56 N, i.e. a wheel torque of 74.56·R = 14.91 N·m.

    * 30 N·m (beyond it): both wheels slide, the ground force is the Coulomb limit, so the robot accelerates at
      a = 2·μ·m·g/M = μ·g = 7.848 m/s² (Σm = M), while the wheels spin up at (τ − R·F_max)/I =
      (30 − 14.91)/0.04 = 377 rad/s²: after 0.5 s, ω·R = 37.7 m/s against a ground speed of 3.92 m/s.
    * 1 N·m (below it): the wheels roll; a = 2·(τ/R)/(M + 2·I/R²) = 10/21 = 0.476 m/s². The friction model makes
      ω follow v/R one step late, so the relative slip is a·dt/v = dt/t = 0.2 % at t = 0.5 s, dt = 1 ms.
    """
    w = make_world(tmp_path, diff_robot(), dt=0.001)
    v = w.vehicles["r"]
    v.controller.torque_l = v.controller.torque_r = -torque
    w.run(0.5)
    ground = v.twist[0]
    surface = v.omega * R_WHEEL
    slip = (surface - ground) / ground
    if slips:
        assert np.all(slip > 0.20)
        assert ground / 0.5 == pytest.approx(0.8 * G, rel=1e-3)
        assert surface == pytest.approx(np.full(2, 0.5 * (torque - R_WHEEL * 0.8 * M_LOAD_DIFF * G) / I_WHEEL
                                                 * R_WHEEL), rel=1e-3)
    else:
        assert np.all(np.abs(slip) < 0.01)
        assert ground / 0.5 == pytest.approx(2 * torque / R_WHEEL / (M_DIFF + 2 * I_WHEEL / R_WHEEL ** 2), rel=1e-3)


# ---------------------------------------------------------------------------------------------- 3. ice region
def test_braking_distance_on_ice_follows_mu_g(tmp_path):
    """A twist_pid robot (KP 30) cruising at 2 m/s brakes (setpoint 0) at x = 0; beyond x = 0 the ground is either
    normal (μ 0.8) or an ice ``friction_mu`` region (μ 0.1). The PID torque saturates the wheel friction, so every
    wheel slides at its Coulomb limit and the robot decelerates at Σμ·m_i·g/M = μ·g: the distance from v0 down to
    v1 = 0.5 m/s is (v0² − v1²)/(2·μ·g) — 1.91 m on ice, 0.24 m on normal ground."""
    distances = {}
    for mu, region in ((0.8, ""), (0.1, friction_region(0.1, (0, 100), (-10, 10)))):
        ctrl = '<controller class="twist_pid"><KP>30</KP><max_torque>100</max_torque></controller>'
        w = make_world(tmp_path, region + diff_robot(controller=ctrl, x=-4.0), dt=0.001, name=f"w{mu}.xml")
        v = w.vehicles["r"]
        v.set_twist(2.0, 0.0, 0.0)
        while v.pose[0] < 0.0:
            w.step()
        x0, v0 = v.pose[0], v.twist[0]
        assert v0 == pytest.approx(2.0, abs=0.01)
        v.set_twist(0.0, 0.0, 0.0)
        while v.twist[0] > 0.5:
            w.step()
        d, v1 = v.pose[0] - x0, v.twist[0]
        assert d == pytest.approx((v0 ** 2 - v1 ** 2) / (2 * mu * G), rel=0.05), mu
        distances[mu] = d
    assert distances[0.1] > 5 * distances[0.8]


# ---------------------------------------------------------------------------------------------- 4. rolling resistance
def coast_down(tmp_path, friction: str, steps: int = 100, dt: float = 0.001):
    """A raw robot (zero torque) launched at 2 m/s with its wheels already rolling (ω = v/R); body speeds per step."""
    w = make_world(tmp_path, diff_robot(friction=friction, extra="<init_vel>2 0 0</init_vel>"), dt=dt)
    v = w.vehicles["r"]
    w.start().physics.wheels.omega[:] = 2.0 / R_WHEEL
    speeds = []
    for _ in range(steps):
        w.step()
        speeds.append(v.twist[0])
    return w, np.array(speeds)


def test_default_friction_rolling_resistance_decelerates_by_crr_g(tmp_path):
    """Default friction, C_rr 0.02, no axle damping: each wheel gets the torque T_rr = C_rr·m·g·R·tanh(100·ω)
    (tanh = 1 at ω = 10 rad/s) opposing its spin; rolling, the ground force per wheel is −T_rr/R − I·a/R², so
    M·a = −C_rr·g·Σm − 2·I·a/R² → a = −C_rr·g·M/(M + 2·I/R²) = −0.02·9.81·19/21 = −0.1775 m/s²."""
    _, v = coast_down(tmp_path, '<friction class="default"><C_damping>0</C_damping><C_rr>0.02</C_rr></friction>')
    decel = (v[-1] - v[0]) / (0.001 * (len(v) - 1))
    assert decel == pytest.approx(-0.02 * G * M_DIFF / (M_DIFF + 2 * I_WHEEL / R_WHEEL ** 2), rel=0.05)
    assert decel == pytest.approx(-0.02 * G, rel=0.15)


WARD = '<friction class="wardiagnemma"><C_damping>0</C_damping></friction>'  # A_roll 50, R1 0.0075, R2 0.02


def ward_iagnemma_frr(vx: np.ndarray | float, m: float = M_LOAD_DIFF) -> np.ndarray | float:
    """F_rr = −sign(v)·m·g·(R1·(1 − exp(−A_roll·|v|)) + R2·|v|) with the default A_roll 50, R1 0.0075, R2 0.02."""
    return -np.sign(vx) * m * G * (0.0075 * (1.0 - np.exp(-50.0 * np.abs(vx))) + 0.02 * np.abs(vx))


def test_ward_iagnemma_first_step_force_is_the_rolling_resistance(tmp_path):
    """Step 1 of the coast-down: the wheel rolls exactly (α* = 0) and has no torque nor damping, so its longitudinal
    force is F_rr alone: at v = 2 m/s, −9.5·9.81·(0.0075 + 0.04) = −4.427 N per wheel."""
    w, _ = coast_down(tmp_path, WARD, steps=1)
    wh = w.start().physics.wheels
    assert wh.vx == pytest.approx(np.full(2, 2.0), abs=1e-6)
    assert wh.fx == pytest.approx(ward_iagnemma_frr(wh.vx), rel=1e-9)
    assert wh.fx[0] == pytest.approx(-4.427, abs=1e-3)


def test_ward_iagnemma_coast_down_follows_its_rolling_resistance(tmp_path):
    """Without torque or damping, the only longitudinal force is F_rr (4.43 N per wheel at 2 m/s). It is a ground
    force: it brakes the vehicle and does not spin the wheel (upstream adds it before the spin update, so there it
    cancels from the second step on — see mvsim_core/dynamics/friction/wardiagnemma.py). The rolling
    wheels add their inertia: a = ΣF_rr/(M + 2·I/R²) = −8.85/21 = −0.42 m/s² (v drops < 3 % over 0.1 s, so F_rr
    is taken at the mean speed)."""
    _, v = coast_down(tmp_path, WARD)
    decel = (v[-1] - 2.0) / 0.1
    expected = 2 * ward_iagnemma_frr(0.5 * (2.0 + v[-1])) / (M_DIFF + 2 * I_WHEEL / R_WHEEL ** 2)
    assert decel == pytest.approx(expected, rel=0.10)


# ---------------------------------------------------------------------------------------------- 5. differentials
DRIVETRAIN_CAR = """<vehicle name="car">
  <dynamics class="ackermann_drivetrain">
    <chassis linear_damping="0" angular_damping="0"/>
    <drivetrain type="{drivetrain}"/>
    <controller class="raw"><torque>-150</torque></controller>
  </dynamics>
  <friction class="default"><mu>0.8</mu><C_damping>0</C_damping></friction>
  <init_pose>0 0 0</init_pose>
</vehicle>"""
# the right-hand side (rr_wheel at y = −0.9, fr_wheel at y = −1.0) is on ice
ICE_RIGHT = friction_region(0.05, (-100, 100), (-10, -0.45))


def torsen_fractions(w1: float, w2: float, bias: float = 1.5, split: float = 0.5) -> tuple[float, float]:
    """Reference §1.11: δ = max|ω| − bias·min|ω|, Δ = δ/max|ω| if δ > 0 else 0; faster shaft split·(1 − Δ), slower
    (1 − split)·(1 + Δ), renormalised; (split, 1 − split) when a shaft stands still."""
    a1, a2 = abs(w1), abs(w2)
    if a1 == 0 or a2 == 0:
        return split, 1 - split
    d = max(0.0, max(a1, a2) - bias * min(a1, a2)) / max(a1, a2)
    f1, f2 = (split * (1 - d), (1 - split) * (1 + d)) if a1 > a2 else (split * (1 + d), (1 - split) * (1 - d))
    return f1 / (f1 + f2), f2 / (f1 + f2)


def test_torsen_sends_torque_to_the_gripping_wheel(tmp_path):
    """150 N·m into the rear axle of a 508 kg car whose rear-right wheel is on ice (μ 0.05):

    * open_rear: 75 N·m per wheel whatever they do. The iced wheel slides at μ·m·g = 0.05·127·9.81 = 62.3 N; the
      gripping one passes 75/R = 375 N minus its inertia share, so a = (375 + 62.3)/(M + 3·I/R²) = 0.856 m/s²
      (three wheels roll: rear-left and both fronts).
    * torsen_rear: the spinning iced wheel makes the Torsen send most of the torque to the slow, gripping one
      (fractions recomputed from the spins before each step, formula above), so the car goes further.
    """
    runs = {}
    for drivetrain in ("open_rear", "torsen_rear"):
        w = make_world(tmp_path, ICE_RIGHT + DRIVETRAIN_CAR.format(drivetrain=drivetrain), dt=0.001,
                       name=f"{drivetrain}.xml")
        v = w.vehicles["car"]
        w.start()  # builds the physics, which gives v.omega its wheel spins
        grip = []
        for _ in range(500):
            om = v.omega.copy()
            w.step()
            t = v.torques
            fl, fr = (0.5, 0.5) if drivetrain == "open_rear" else torsen_fractions(om[0], om[1])
            assert t == pytest.approx([-150 * fl, -150 * fr, 0.0, 0.0], rel=1e-12, abs=1e-12)
            grip.append(-t[0])
        assert w.start().physics.wheels.params[:, 0] == pytest.approx([0.8, 0.05, 0.8, 0.05])  # the region is seen
        runs[drivetrain] = (v.pose[0], v.twist[0], np.array(grip))
    x_open, v_open, grip_open = runs["open_rear"]
    x_torsen, _, grip_torsen = runs["torsen_rear"]
    m_wheel_load = 500.0 / 4 + 2.0
    a_open = (75.0 / 0.2 + 0.05 * m_wheel_load * G) / (508.0 + 3 * 0.04 / 0.2 ** 2)
    assert v_open / 0.5 == pytest.approx(a_open, rel=0.01)
    assert np.all(grip_open == 75.0)
    assert np.all(grip_torsen[10:] > 1.5 * 75.0)  # once the iced wheel spins, ≥ 112.5 N·m go to the gripping one
    assert x_torsen > 1.5 * x_open


# ---------------------------------------------------------------------------------------------- 6. Ackermann geometry
@pytest.mark.parametrize("steer_deg", [20.0, -20.0])
def test_ackermann_wheel_angles(tmp_path, steer_deg):
    """Default Ackermann: track w = y_fl − y_fr = 2.0 m, wheelbase l = x_fl − x_rl = 1.3 m (reference §1.11):
    cot(δ_out) = cot(δ) + w/(2l), cot(δ_in) = cot(δ_out) − w/l; a left turn (δ > 0) makes the left wheel the inner
    one. For δ = 20°: δ_out = 15.87°, δ_in = 26.82°."""
    body = CAR_TURN.format(model="default").replace("<steer_ang_deg>30", f"<steer_ang_deg>{steer_deg}") \
        .replace("<init_vel>10 0 0</init_vel>", "")
    w = make_world(tmp_path, body, dt=0.005)
    w.step()
    v = w.vehicles["car"]
    delta = math.radians(abs(steer_deg))
    cot_out = 1 / math.tan(delta) + 2.0 / (2 * 1.3)
    d_out, d_in = math.atan(1 / cot_out), math.atan(1 / (cot_out - 2.0 / 1.3))
    assert (math.degrees(d_out), math.degrees(d_in)) == pytest.approx((15.87, 26.82), abs=0.01)
    expected = (d_in, d_out) if steer_deg > 0 else (-d_out, -d_in)
    assert (v.wheels[2].yaw, v.wheels[3].yaw) == pytest.approx(expected, abs=1e-12)
    assert w.start().physics.wheels.yaw == pytest.approx([0.0, 0.0, *expected], abs=1e-12)  # what friction uses
