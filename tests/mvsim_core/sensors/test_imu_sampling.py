"""IMU readings from running worlds: gravity at rest, yaw rate, centripetal acceleration at a lever arm, sensor-frame
rotation, orientation quaternion, stamps and reproducibility (reference §1.12 ``imu``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.sensors.imu import ImuReading, so3_exp

NOISELESS = """<angular_velocity_white_noise_std_noise>0</angular_velocity_white_noise_std_noise>
    <linear_acceleration_white_noise_std_noise>0</linear_acceleration_white_noise_std_noise>
    <orientation_std_noise>0</orientation_std_noise>"""


def imu_xml(name: str, pose: str = "", period: float = 0.01, noiseless: bool = True, extra: str = "") -> str:
    return (f'<sensor class="imu" name="{name}"><sensor_period>{period}</sensor_period>{pose}'
            f'{NOISELESS if noiseless else ""}{extra}</sensor>')


def make_world(tmp_path, sensors: str, *, dt: float = 0.001, head: str = "", seed: int = 0) -> mv.World:
    """A world with one twist_ideal differential robot ``v`` at the origin carrying ``sensors``."""
    (tmp_path / "w.xml").write_text(f"""<mvsim_world version="1.0">
<simul_timestep>{dt}</simul_timestep>
{head}
<vehicle name="v">
  <dynamics class="differential">
    <l_wheel pos="0 0.5" diameter="0.2" mass="1"/>
    <r_wheel pos="0 -0.5" diameter="0.2" mass="1"/>
    <chassis linear_damping="0" angular_damping="0"/>
    <controller class="twist_ideal"/>
  </dynamics>
  <init_pose>0 0 0</init_pose>
  {sensors}
</vehicle>
</mvsim_world>
""")
    return mv.load_world(tmp_path / "w.xml", seed=seed)


def reading(world: mv.World, name: str) -> ImuReading:
    r = world.vehicles["v"].sensors[name].last
    assert isinstance(r, ImuReading)
    return r


@pytest.mark.parametrize("gravity", [9.81, 3.71])
def test_at_rest_reads_gravity_up(tmp_path, gravity):
    w = make_world(tmp_path, imu_xml("imu1") + imu_xml("imu2", "<pose>0.4 -0.3 30</pose>"),
                   head=f"<gravity>{gravity}</gravity>")
    w.run(0.5)
    for name in ("imu1", "imu2"):
        r = reading(w, name)
        assert r.stamp == pytest.approx(0.5)
        assert r.frame == name
        assert r.orientation is None
        np.testing.assert_allclose(r.linear_acceleration, [0.0, 0.0, gravity], atol=1e-9)
        np.testing.assert_allclose(r.angular_velocity, [0.0, 0.0, 0.0], atol=1e-12)
        assert r.linear_acceleration.shape == r.angular_velocity.shape == (3,)


def test_pitched_sensor_sees_gravity_on_x(tmp_path):
    """pose_3d pitch +90° (x pointing down): the specific force (upwards) reads −g on the sensor's x."""
    w = make_world(tmp_path, imu_xml("imu1", "<pose_3d>0 0 0.2 0 90 0</pose_3d>"))
    w.run(0.1)
    np.testing.assert_allclose(reading(w, "imu1").linear_acceleration, [-9.81, 0.0, 0.0], atol=1e-9)


def test_first_sample_and_stamps(tmp_path):
    w = make_world(tmp_path, imu_xml("imu1", period=0.05))
    imu = w.vehicles["v"].sensors["imu1"]
    w.run(0.049)
    assert imu.last is None
    stamps = []
    for _ in range(200):
        w.step()
        if not stamps or imu.last.stamp != stamps[-1]:
            stamps.append(imu.last.stamp)
    np.testing.assert_allclose(np.diff(stamps), 0.05, atol=1e-9)
    assert stamps[0] == pytest.approx(0.05)


@pytest.mark.parametrize("omega", [1.0, -2.0])
def test_turning_in_place_reads_yaw_rate_and_centripetal(tmp_path, omega):
    sensors = (imu_xml("ref") + imu_xml("front", "<pose>1.0 0 0</pose>")
               + imu_xml("left", "<pose>0 0.5 0</pose>") + imu_xml("front_yawed", "<pose>1.0 0 90</pose>"))
    w = make_world(tmp_path, sensors)
    w.vehicles["v"].set_twist(0.0, 0.0, omega)
    w.run(1.0)
    w2 = omega * omega
    for name in ("ref", "front", "left", "front_yawed"):
        np.testing.assert_allclose(reading(w, name).angular_velocity, [0.0, 0.0, omega], rtol=1e-6, atol=1e-9)
    # ω²·r towards the centre, within 2 %
    acc = reading(w, "front").linear_acceleration
    assert acc[0] == pytest.approx(-w2 * 1.0, rel=0.02)
    assert abs(acc[1]) < 0.02 * w2 and acc[2] == pytest.approx(9.81)
    acc = reading(w, "left").linear_acceleration
    assert acc[1] == pytest.approx(-w2 * 0.5, rel=0.02)
    assert abs(acc[0]) < 0.02 * w2
    # the same acceleration seen from a sensor yawed +90°: the centre is on its +y
    acc = reading(w, "front_yawed").linear_acceleration
    assert acc[1] == pytest.approx(w2 * 1.0, rel=0.02)
    assert abs(acc[0]) < 0.02 * w2
    # the reference point does not move
    np.testing.assert_allclose(reading(w, "ref").linear_acceleration, [0.0, 0.0, 9.81], atol=0.02 * w2)


def test_driving_a_circle(tmp_path):
    """v = 1 m/s, ω = 1 rad/s: the reference point reads v·ω = 1 m/s² to the left (the centre), a sensor 0.5 m
    ahead adds ω²·0.5 backwards."""
    w = make_world(tmp_path, imu_xml("ref") + imu_xml("ahead", "<pose>0.5 0 0</pose>"))
    w.vehicles["v"].set_twist(1.0, 0.0, 1.0)
    w.run(1.0)
    ref = reading(w, "ref").linear_acceleration
    assert ref[1] == pytest.approx(1.0, rel=0.02) and abs(ref[0]) < 0.02
    ahead = reading(w, "ahead").linear_acceleration
    assert ahead[0] == pytest.approx(-0.5, rel=0.02) and ahead[1] == pytest.approx(1.0, rel=0.02)


def test_straight_acceleration_from_finite_differences(tmp_path):
    """A step in commanded speed between two samples reads Δv/Δt along x."""
    w = make_world(tmp_path, imu_xml("imu1", period=0.1))
    v = w.vehicles["v"]
    w.run(0.1)
    v.set_twist(0.5, 0.0, 0.0)
    w.run(0.1)
    assert reading(w, "imu1").linear_acceleration[0] == pytest.approx(0.5 / 0.1, rel=0.02)
    w.run(0.1)
    assert reading(w, "imu1").linear_acceleration[0] == pytest.approx(0.0, abs=1e-6)


def test_orientation_quaternion(tmp_path):
    extra = "<measure_orientation>true</measure_orientation>"
    head = "<georeference><latitude>36</latitude><longitude>-2</longitude>" \
           "<world_to_enu_rotation_deg>90</world_to_enu_rotation_deg></georeference>"
    w = make_world(tmp_path, imu_xml("imu1", "<pose>0 0 30</pose>", extra=extra), head=head)
    w.vehicles["v"].set_twist(0.0, 0.0, 0.5)
    w.run(1.0)
    q = reading(w, "imu1").orientation
    assert q is not None and q.shape == (4,)
    vehicle_yaw = w.vehicles["v"].pose[3]
    assert vehicle_yaw == pytest.approx(0.5, abs=0.01)
    yaw = vehicle_yaw + math.radians(30) + math.radians(90)
    np.testing.assert_allclose(q, [0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2)], atol=1e-6)


def test_orientation_noise_is_a_small_rotation(tmp_path):
    sigma = 0.01
    extra = f"<measure_orientation>true</measure_orientation><orientation_std_noise>{sigma}</orientation_std_noise>"
    w = make_world(tmp_path, f'<sensor class="imu" name="imu1"><sensor_period>0.001</sensor_period>{extra}</sensor>')
    angles = []
    for _ in range(2000):
        w.step()
        x, y, z, qw = w.vehicles["v"].sensors["imu1"].last.orientation
        angles.append(2.0 * np.array([x, y, z]) / qw)  # ≈ rotation vector for small angles
    std = np.array(angles).std(axis=0)
    assert np.all(np.abs(std / sigma - 1.0) < 0.10), std


def test_same_seed_same_readings(tmp_path):
    sensors = ('<sensor class="imu" name="imu1"><sensor_period>0.01</sensor_period>'
               "<angular_velocity_random_walk_std_noise>0.01</angular_velocity_random_walk_std_noise>"
               "<linear_acceleration_random_walk_std_noise>0.01</linear_acceleration_random_walk_std_noise>"
               "<measure_orientation>true</measure_orientation></sensor>")

    def readings(seed: int) -> list[np.ndarray]:
        w = make_world(tmp_path, sensors, seed=seed)
        w.vehicles["v"].set_twist(0.3, 0.0, 0.2)
        out = []
        for _ in range(20):
            w.run(0.01)
            r = reading(w, "imu1")
            out.append(np.concatenate([[r.stamp], r.angular_velocity, r.linear_acceleration, r.orientation]))
        return out

    a, b, c = readings(5), readings(5), readings(6)
    np.testing.assert_array_equal(np.array(a), np.array(b))
    assert not np.array_equal(np.array(a), np.array(c))


def test_reset_forgets_bias(tmp_path):
    w = make_world(tmp_path, imu_xml("imu1", extra="<angular_velocity_random_walk_std_noise>0.1"
                                            "</angular_velocity_random_walk_std_noise>"))
    w.run(0.5)
    imu = w.vehicles["v"].sensors["imu1"]
    assert np.abs(imu.noise.gyro_bias).sum() > 0
    imu.reset()
    assert not imu.noise.gyro_bias.any()


def test_so3_exp_is_a_rotation():
    rng = np.random.default_rng(0)
    for _ in range(50):
        v = rng.normal(0.0, 1.5, 3)
        r = so3_exp(v)
        np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-12)
        assert np.linalg.det(r) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(r @ v, v, atol=1e-12)  # the rotation vector is the axis


class _FakeCtx:
    """Just what :meth:`Imu.sample` reads: one vehicle whose state, pitch and roll the test sets."""

    def __init__(self, yaw: float) -> None:
        from types import SimpleNamespace

        from mvsim_core.rng import WorldRandom

        self.physics = SimpleNamespace(state=np.array([[0.0, 0.0, yaw, 0.0, 0.0, 0.0]]), z=np.zeros(1),
                                       pitch=np.zeros(1), roll=np.zeros(1))
        self.world = SimpleNamespace(params={"gravity": 9.81}, georeference=None)
        self.rng = WorldRandom(0)

    def vehicle_index(self, sensor) -> int:
        return 0

    def sensor_pose(self, sensor):
        from mvsim_core.geometry.rotations import compose_rt

        st = self.physics.state[0]
        host = (st[0], st[1], 0.0, st[2], self.physics.pitch[0], self.physics.roll[0])
        return compose_rt(host, sensor.pose)


@pytest.mark.parametrize("yaw", [0.0, 0.7])
def test_pitch_and_roll_rates_reach_the_gyroscope(make_sensor, yaw):
    """Terrain attitude changes between samples (finite differences) appear as body-frame rates."""
    imu, _ = make_sensor(f'<sensor class="imu">{NOISELESS}</sensor>', parent="v")
    ctx = _FakeCtx(yaw)
    imu.sample(ctx, 0.1)
    ctx.physics.pitch[0] = 0.01
    r = imu.sample(ctx, 0.2)
    np.testing.assert_allclose(r.angular_velocity, [0.0, 0.1, 0.0], atol=1e-9)
    ctx.physics.roll[0] = 0.02
    r = imu.sample(ctx, 0.3)
    # roll rate about the body x axis (pitch 0.01 tilts it slightly out of the ground plane)
    np.testing.assert_allclose(r.angular_velocity, [0.2, 0.0, 0.0], atol=1e-9)
    # tilted IMU at rest: gravity seen through pitch and roll
    p, rr = 0.01, 0.02
    np.testing.assert_allclose(r.linear_acceleration,
                               9.81 * np.array([-math.sin(p), math.cos(p) * math.sin(rr), math.cos(p) * math.cos(rr)]),
                               atol=1e-9)
