"""IMU noise model (reference §6 ``test_imu_noise_model``): white noise statistics, bias random walk, reset.

The model is driven directly with a seeded :class:`WorldRandom`; one test checks the same statistics on readings of a
noisy IMU in a running world.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.rng import WorldRandom
from mvsim_core.sensors.imu_noise import ImuNoiseModel

N = 10_000
GYRO_W, ACC_W = 0.05, 0.1  # σ of the white noise, as upstream's test (rad/s, m/s²)
TRUE_GYRO = np.array([0.1, -0.2, 0.3])
TRUE_ACC = np.array([1.0, -2.0, 9.81])


def run_model(model: ImuNoiseModel, n: int = N, dt: float = 0.01, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """n samples of the model on constant true values: (gyro n×3, accel n×3)."""
    rng = WorldRandom(seed)
    g = np.empty((n, 3))
    a = np.empty((n, 3))
    for i in range(n):
        g[i], a[i] = model.apply(TRUE_GYRO, TRUE_ACC, dt, rng)
    return g, a


def test_zero_noise_is_exact_and_draws_nothing():
    model = ImuNoiseModel()
    assert model.is_noiseless
    rng = WorldRandom(3)
    before = rng.generator.bit_generator.state
    g, a = model.apply(TRUE_GYRO, TRUE_ACC, 0.01, rng)
    np.testing.assert_array_equal(g, TRUE_GYRO)
    np.testing.assert_array_equal(a, TRUE_ACC)
    assert rng.generator.bit_generator.state == before


def test_white_noise_statistics():
    g, a = run_model(ImuNoiseModel(gyro_white_std=GYRO_W, accel_white_std=ACC_W))
    for err, sigma in ((g - TRUE_GYRO, GYRO_W), (a - TRUE_ACC, ACC_W)):
        mean, std = err.mean(axis=0), err.std(axis=0, ddof=1)
        assert np.all(np.abs(mean) < 4.0 * sigma / math.sqrt(N)), mean
        assert np.all(np.abs(std / sigma - 1.0) < 0.10), std


def test_white_noise_only_keeps_bias_at_zero():
    model = ImuNoiseModel(gyro_white_std=GYRO_W, accel_white_std=ACC_W)
    run_model(model, n=100)
    assert not model.gyro_bias.any() and not model.accel_bias.any()


def test_bias_random_walk_grows():
    rw_g, rw_a, dt = 0.01, 0.02, 0.01
    model = ImuNoiseModel(gyro_random_walk_std=rw_g, accel_random_walk_std=rw_a)
    rng = WorldRandom(7)
    gb = np.empty((N, 3))
    ab = np.empty((N, 3))
    for i in range(N):
        g, a = model.apply(TRUE_GYRO, TRUE_ACC, dt, rng)
        gb[i], ab[i] = g - TRUE_GYRO, a - TRUE_ACC
    # with no white noise the output error is the bias itself
    np.testing.assert_allclose(gb[-1], model.gyro_bias)
    np.testing.assert_allclose(ab[-1], model.accel_bias)
    assert np.all(model.gyro_bias != 0.0) and np.all(model.accel_bias != 0.0)
    # increments: N(0, σ_rw²·dt) per axis, σ within 10 %
    for bias, rw in ((gb, rw_g), (ab, rw_a)):
        steps = np.diff(bias, axis=0)
        assert np.all(np.abs(steps.std(axis=0, ddof=1) / (rw * math.sqrt(dt)) - 1.0) < 0.10)
        # the walk after N steps is of the order σ_rw·sqrt(N·dt) (each axis: one draw of that σ)
        expected = rw * math.sqrt(N * dt)
        rms = math.sqrt(float(np.mean(bias[-1] ** 2)))
        assert expected / 10.0 < rms < 4.0 * expected
        assert bias[-1].std() > 0.0


def test_bias_step_scales_with_dt():
    """b += N(0, σ_rw²·dt): four times the time between samples doubles the step's σ."""
    stds = []
    for dt in (0.01, 0.04):
        model = ImuNoiseModel(gyro_random_walk_std=0.1)
        g, _ = run_model(model, n=4000, dt=dt, seed=11)
        stds.append(np.diff(g, axis=0).std())
    assert stds[1] / stds[0] == pytest.approx(2.0, rel=0.1)


def test_reset_zeroes_bias():
    model = ImuNoiseModel(gyro_white_std=GYRO_W, accel_white_std=ACC_W, gyro_random_walk_std=0.01,
                          accel_random_walk_std=0.01)
    run_model(model, n=50)
    assert np.abs(model.gyro_bias).sum() > 0 and np.abs(model.accel_bias).sum() > 0
    model.reset()
    np.testing.assert_array_equal(model.gyro_bias, np.zeros(3))
    np.testing.assert_array_equal(model.accel_bias, np.zeros(3))


def test_combined_noise_has_more_variance_than_white_only():
    white = ImuNoiseModel(gyro_white_std=GYRO_W, accel_white_std=ACC_W)
    both = ImuNoiseModel(gyro_white_std=GYRO_W, accel_white_std=ACC_W, gyro_random_walk_std=0.05,
                         accel_random_walk_std=0.1)
    gw, aw = run_model(white, seed=5)
    gb, ab = run_model(both, seed=5)
    assert gb.var(axis=0).sum() > gw.var(axis=0).sum()
    assert ab.var(axis=0).sum() > aw.var(axis=0).sum()


def test_same_seed_same_sequence():
    make = lambda: ImuNoiseModel(gyro_white_std=GYRO_W, accel_white_std=ACC_W, gyro_random_walk_std=0.01,
                                 accel_random_walk_std=0.02)
    g1, a1 = run_model(make(), n=200, seed=42)
    g2, a2 = run_model(make(), n=200, seed=42)
    g3, _ = run_model(make(), n=200, seed=43)
    np.testing.assert_array_equal(g1, g2)
    np.testing.assert_array_equal(a1, a2)
    assert not np.array_equal(g1, g3)


def test_accepts_numpy_generator():
    model = ImuNoiseModel(gyro_white_std=0.1)
    g1 = model.apply_gyroscope(TRUE_GYRO, 0.01, np.random.Generator(np.random.PCG64(9)))
    g2 = ImuNoiseModel(gyro_white_std=0.1).apply_gyroscope(TRUE_GYRO, 0.01, WorldRandom(9))
    np.testing.assert_array_equal(g1, g2)


@pytest.mark.parametrize("kw", [{"gyro_white_std": -1.0}, {"accel_random_walk_std": float("nan")}])
def test_invalid_sigma_is_rejected(kw):
    with pytest.raises(ValueError):
        ImuNoiseModel(**kw)


def test_noise_of_a_simulated_imu(tmp_path):
    """A noisy IMU sampled every 1 ms at rest: white-noise σ within 10 % on every axis, mean at the true value."""
    (tmp_path / "w.xml").write_text("""<mvsim_world version="1.0">
<simul_timestep>0.001</simul_timestep>
<vehicle name="v">
  <dynamics class="differential"><controller class="twist_ideal"/></dynamics>
  <init_pose>0 0 0</init_pose>
  <sensor class="imu" name="imu1">
    <sensor_period>0.001</sensor_period>
    <angular_velocity_white_noise_std_noise>0.05</angular_velocity_white_noise_std_noise>
    <linear_acceleration_white_noise_std_noise>0.1</linear_acceleration_white_noise_std_noise>
  </sensor>
</vehicle>
</mvsim_world>
""")
    w = mv.load_world(tmp_path / "w.xml", seed=3)
    imu = w.vehicles["v"].sensors["imu1"]
    g, a = [], []
    for _ in range(2000):
        w.step()
        g.append(imu.last.angular_velocity)
        a.append(imu.last.linear_acceleration)
    g, a = np.array(g), np.array(a)
    assert np.all(np.abs(g.std(axis=0) / GYRO_W - 1.0) < 0.10)
    assert np.all(np.abs(a.std(axis=0) / ACC_W - 1.0) < 0.10)
    np.testing.assert_allclose(g.mean(axis=0), [0, 0, 0], atol=4 * GYRO_W / math.sqrt(2000))
    np.testing.assert_allclose(a.mean(axis=0), [0, 0, 9.81], atol=4 * ACC_W / math.sqrt(2000))
