"""Ray direction vectors from cached sensor-frame unit vectors, sensor yaw and noise."""

import numpy as np
import pytest

from mvsim_core.sensors.raycast.directions import SERIES_LIMIT, rotate_directions


@pytest.mark.parametrize("noise_scale", [0.0, 1.7e-4, 0.02, 0.3])
def test_rotated_vectors_match_cos_sin_of_the_summed_angle(noise_scale):
    rng = np.random.default_rng(5)
    theta = np.linspace(-np.pi, np.pi, 1441)
    yaw = np.array([0.0, 2.5, -1.2])
    sensor = np.repeat(np.arange(3), len(theta))
    base = np.tile(theta, 3)
    noise = rng.standard_normal(base.size) * noise_scale if noise_scale else np.zeros(0)
    dx, dy = np.empty(base.size), np.empty(base.size)
    rotate_directions(np.cos(base), np.sin(base), sensor, np.cos(yaw), np.sin(yaw), noise, dx, dy)
    angle = yaw[sensor] + base + (noise if noise.size else 0.0)
    assert np.abs(dx - np.cos(angle)).max() < 1e-13
    assert np.abs(dy - np.sin(angle)).max() < 1e-13
    if noise_scale == 0.3:  # both branches ran
        assert (np.abs(noise) > SERIES_LIMIT).any() and (np.abs(noise) <= SERIES_LIMIT).any()
