"""``<sensor class="imu">``: a 6-axis inertial unit with optional orientation output (reference §1.12).

Outputs in the sensor frame: angular velocity (rad/s) and specific force (m/s²; at rest the accelerometer reads
+9.81 on z), optionally an orientation quaternion. Noise model (Forster et al., "On-Manifold Preintegration",
IEEE T-RO 2016): per sample, white noise of the ``*_white_noise_std_noise`` std. dev., plus a bias that does a random
walk, b += N(0, σ_rw²·dt) every physics step (σ_rw in rad/s/√s and m/s²/√s; 0 disables it).
"""

from __future__ import annotations

from typing import ClassVar

from mvsim_core.sensors.base import Sensor
from mvsim_core.xml.params import Kind, Param


class Imu(Sensor):
    """IMU; class ``imu``, default names ``imu1``, ``imu2``, ...

    Parameters (upstream default, unit):
        angular_velocity_white_noise_std_noise (alias angular_velocity_std_noise): 2e-4 rad/s.
        linear_acceleration_white_noise_std_noise (alias linear_acceleration_std_noise): 0.017 m/s².
        angular_velocity_random_walk_std_noise: 0 rad/s/√s. linear_acceleration_random_walk_std_noise: 0 m/s²/√s.
        measure_orientation: false. orientation_std_noise: 0.005 rad.
    Pose: ``pose`` (x y yaw_deg, z = 0) or ``pose_3d``; default the vehicle origin.
    """

    xml_class: ClassVar[str] = "imu"
    name_prefix: ClassVar[str] = "imu"
    POSE_TAGS: ClassVar[tuple[str, ...]] = ("pose", "pose_3d")
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("angular_velocity_white_noise_std_noise", Kind.FLOAT, 2e-4, "rad/s", min=0.0,
              aliases=("angular_velocity_std_noise",), doc="gyroscope white noise std. dev."),
        Param("linear_acceleration_white_noise_std_noise", Kind.FLOAT, 0.017, "m/s²", min=0.0,
              aliases=("linear_acceleration_std_noise",), doc="accelerometer white noise std. dev."),
        Param("angular_velocity_random_walk_std_noise", Kind.FLOAT, 0.0, "rad/s/√s", min=0.0,
              doc="gyroscope bias random walk (0 = none)"),
        Param("linear_acceleration_random_walk_std_noise", Kind.FLOAT, 0.0, "m/s²/√s", min=0.0,
              doc="accelerometer bias random walk (0 = none)"),
        Param("measure_orientation", Kind.BOOL, False, doc="also output an orientation quaternion"),
        Param("orientation_std_noise", Kind.FLOAT, 0.005, "rad", min=0.0, doc="orientation noise std. dev."),
    )

    @property
    def gyro_noise(self) -> float:
        """White noise std. dev. of the angular velocity (rad/s)."""
        return float(self.params["angular_velocity_white_noise_std_noise"])

    @property
    def accel_noise(self) -> float:
        """White noise std. dev. of the linear acceleration (m/s²)."""
        return float(self.params["linear_acceleration_white_noise_std_noise"])

    def details(self) -> str:
        return "with orientation" if self.params["measure_orientation"] else ""
