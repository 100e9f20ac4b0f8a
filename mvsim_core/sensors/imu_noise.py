"""IMU noise: white noise plus a bias random walk per channel (Forster et al., "On-Manifold Preintegration for
Real-Time Visual-Inertial Odometry", IEEE T-RO 2016; reference §1.12 ``imu`` and §6 ``test_imu_noise_model``).

For each channel (gyroscope, accelerometer), at every sample k, with dt_k the time since the previous sample (s)::

    b_k = b_{k-1} + N(0, σ_rw² · dt_k)      per axis (σ_rw in unit/√s; skipped when σ_rw = 0)
    m_k = true_k + b_k + N(0, σ_w²)         per axis (σ_w in unit; skipped when σ_w = 0)

Units: the gyroscope channel is in rad/s (σ_rw in rad/s/√s), the accelerometer channel in m/s² (σ_rw in m/s²/√s).
Frames: whatever frame the true values are given in (the sensor frame for :class:`~mvsim_core.sensors.imu.Imu`).

Draw order, so that a seed gives one sequence: gyroscope bias (3), gyroscope white (3), accelerometer bias (3),
accelerometer white (3), each group only when its σ is non-zero (a noiseless IMU draws nothing and leaves the other
sensors' streams untouched).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def _generator(rng: Any) -> np.random.Generator:
    """``rng`` itself if it is a numpy Generator, else its ``.generator`` (a :class:`~mvsim_core.rng.WorldRandom`)."""
    return rng if isinstance(rng, np.random.Generator) else rng.generator


class ImuNoiseModel:
    """White noise + bias random walk for a 3-axis gyroscope and a 3-axis accelerometer.

    Args:
        gyro_white_std: σ_w of the gyroscope (rad/s).
        accel_white_std: σ_w of the accelerometer (m/s²).
        gyro_random_walk_std: σ_rw of the gyroscope bias (rad/s/√s); 0 = constant (zero) bias.
        accel_random_walk_std: σ_rw of the accelerometer bias (m/s²/√s); 0 = constant (zero) bias.

    Attributes:
        gyro_bias: current gyroscope bias (3,), rad/s.
        accel_bias: current accelerometer bias (3,), m/s².
    """

    def __init__(self, gyro_white_std: float = 0.0, accel_white_std: float = 0.0,
                 gyro_random_walk_std: float = 0.0, accel_random_walk_std: float = 0.0) -> None:
        for label, v in (("gyro_white_std", gyro_white_std), ("accel_white_std", accel_white_std),
                         ("gyro_random_walk_std", gyro_random_walk_std),
                         ("accel_random_walk_std", accel_random_walk_std)):
            if not (math.isfinite(v) and v >= 0.0):
                raise ValueError(f"{label} must be a finite value ≥ 0 (got {v})")
        self.gyro_white_std = float(gyro_white_std)
        self.accel_white_std = float(accel_white_std)
        self.gyro_random_walk_std = float(gyro_random_walk_std)
        self.accel_random_walk_std = float(accel_random_walk_std)
        self.gyro_bias = np.zeros(3)
        self.accel_bias = np.zeros(3)

    @classmethod
    def from_params(cls, params: Any) -> ImuNoiseModel:
        """The model of the parameter set of an ``<sensor class="imu">`` (its ``params``)."""
        return cls(gyro_white_std=float(params["angular_velocity_white_noise_std_noise"]),
                   accel_white_std=float(params["linear_acceleration_white_noise_std_noise"]),
                   gyro_random_walk_std=float(params["angular_velocity_random_walk_std_noise"]),
                   accel_random_walk_std=float(params["linear_acceleration_random_walk_std_noise"]))

    @property
    def is_noiseless(self) -> bool:
        """True when every σ is 0 (outputs equal the true values and no random number is drawn)."""
        return not (self.gyro_white_std or self.accel_white_std or self.gyro_random_walk_std
                    or self.accel_random_walk_std)

    def reset(self) -> None:
        """Zero both biases (e.g. after a restart)."""
        self.gyro_bias[:] = 0.0
        self.accel_bias[:] = 0.0

    def apply_gyroscope(self, true: Any, dt: float, rng: Any) -> np.ndarray:
        """Noisy angular velocity (3,), rad/s, from the true one; advances the gyroscope bias by ``dt`` seconds.

        ``rng``: a :class:`numpy.random.Generator` or a :class:`~mvsim_core.rng.WorldRandom`.
        """
        return _channel(true, dt, self.gyro_white_std, self.gyro_random_walk_std, self.gyro_bias, rng)

    def apply_accelerometer(self, true: Any, dt: float, rng: Any) -> np.ndarray:
        """Noisy specific force (3,), m/s², from the true one; advances the accelerometer bias by ``dt`` seconds."""
        return _channel(true, dt, self.accel_white_std, self.accel_random_walk_std, self.accel_bias, rng)

    def apply(self, gyro: Any, accel: Any, dt: float, rng: Any) -> tuple[np.ndarray, np.ndarray]:
        """Both channels of one sample: (noisy angular velocity rad/s, noisy specific force m/s²)."""
        return self.apply_gyroscope(gyro, dt, rng), self.apply_accelerometer(accel, dt, rng)

    def __repr__(self) -> str:
        return (f"<ImuNoiseModel gyro σw {self.gyro_white_std:g} σrw {self.gyro_random_walk_std:g}, "
                f"accel σw {self.accel_white_std:g} σrw {self.accel_random_walk_std:g}>")


def _channel(true: Any, dt: float, white: float, walk: float, bias: np.ndarray, rng: Any) -> np.ndarray:
    """b += N(0, walk²·dt) (in place), then true + b + N(0, white²)."""
    out = np.array(true, dtype=float).reshape(3)
    if walk > 0.0 and dt > 0.0:
        bias += _generator(rng).normal(0.0, walk * math.sqrt(dt), 3)
    out += bias
    if white > 0.0:
        out += _generator(rng).normal(0.0, white, 3)
    return out
