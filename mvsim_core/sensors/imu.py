"""``<sensor class="imu">``: a 6-axis inertial unit with optional orientation output (reference §1.12).

Outputs, in the sensor frame (the sensor's pose on its vehicle; x forward, z up):

* angular velocity (rad/s): R_ws^T · ω_world, with ω_world the vehicle's yaw rate about world z (Box2D) plus the
  pitch and roll rates of the terrain attitude (finite differences between two samples of this sensor);
* linear acceleration = specific force (m/s²): R_ws^T · (a_world − g_vec), g_vec = (0, 0, −g), so a level IMU at
  rest reads (0, 0, +g); a_world is the acceleration of the sensor point (see :meth:`Imu.true_signals`);
* orientation (only with ``measure_orientation``): quaternion (x, y, z, w) of Rz(world_to_enu_rotation) · R_ws ·
  Exp(δ), δ ~ N(0, σ_o² I) a small rotation (rad) in the sensor frame; the ENU rotation is 0 without a georeference.

R_ws is the sensor's rotation in the world (vehicle pose ⊕ sensor pose). Noise: :class:`ImuNoiseModel`
(white noise + bias random walk, b += N(0, σ_rw²·dt) with dt the time since this sensor's previous sample).
All draws come from the IMU's own generator (:attr:`~mvsim_core.sensors.base.Sensor.rng`).

Differences from upstream: upstream rotates the acceleration by the vehicle's rotation only, leaves the angular
velocity in the vehicle frame and differentiates the reference point's velocity; here both are in the sensor frame
and the sensor point's own motion (lever arm) is included. Upstream advances the bias by the physics step at every
sample; here by the time since the previous sample, which is the same when the IMU samples every step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from mvsim_core.geometry.rotations import quaternion_from_rotation
from mvsim_core.sensors.base import Sensor
from mvsim_core.sensors.imu_noise import ImuNoiseModel
from mvsim_core.sensors.outputs import Output, OutputKind
from mvsim_core.xml.params import Kind, Param

if TYPE_CHECKING:
    from mvsim_core.sensors.scheduler import SensorContext


@dataclass
class ImuReading:
    """One IMU observation.

    Attributes:
        stamp: simulated time of the sample (s).
        angular_velocity: (3,) rad/s, sensor frame.
        linear_acceleration: (3,) specific force, m/s², sensor frame (+g on z for a level IMU at rest).
        orientation: (4,) quaternion (x, y, z, w) of the sensor frame in ENU (world frame without georeference),
            w ≥ 0; None unless ``measure_orientation``.
        frame: the sensor's frame name (its name).
    """

    stamp: float
    angular_velocity: np.ndarray
    linear_acceleration: np.ndarray
    orientation: np.ndarray | None
    frame: str


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
    simulated: ClassVar[bool] = True

    def outputs(self) -> tuple[Output, ...]:
        """An inertial measurement (:attr:`OutputKind.IMU`) in the sensor frame; its covariances from the white
        noise of the gyroscope and accelerometer and ``orientation_std_noise``."""
        return (Output(OutputKind.IMU, self.name, self.name, self.period, noise={
            "angular_velocity": float(self.gyro_noise), "linear_acceleration": float(self.accel_noise),
            "orientation": float(self.params.get("orientation_std_noise", 0.0))}),)
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

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.noise = ImuNoiseModel.from_params(self.params)
        """The noise model (white noise + bias random walk) of this IMU."""
        self._reset_history()

    def _reset_history(self, t: float = 0.0) -> None:
        self._prev_t = t  # s: time of the previous sample (the start: 0, as the scheduler's)
        self._prev_u: tuple[float, float] | None = None  # sensor-point velocity in the vehicle frame (m/s)
        self._prev_tilt: tuple[float, float] | None = None  # vehicle pitch, roll (rad)

    def reset(self, t: float = 0.0) -> None:
        """Forget the last reading and the motion history (as at simulated time ``t``, s) and zero the noise
        biases."""
        super().reset(t)
        self.noise.reset()
        self._reset_history(t)

    def save_state(self) -> dict[str, Any]:
        """As :meth:`Sensor.save_state`, with the motion history (time, sensor-point velocity and attitude of the
        previous sample, which the finite differences use) and the noise biases (random walks)."""
        out = super().save_state()
        out.update(prev_t=self._prev_t, prev_u=self._prev_u, prev_tilt=self._prev_tilt,
                   gyro_bias=self.noise.gyro_bias.copy(), accel_bias=self.noise.accel_bias.copy())
        return out

    def restore_state(self, saved: dict[str, Any]) -> None:
        super().restore_state(saved)
        self._prev_t, self._prev_u, self._prev_tilt = saved["prev_t"], saved["prev_u"], saved["prev_tilt"]
        self.noise.gyro_bias[:] = saved["gyro_bias"]
        self.noise.accel_bias[:] = saved["accel_bias"]

    def skipped(self, t: float) -> None:
        """Nobody wanted the sample due at ``t``: the next one is not differenced across the gap (its velocity and
        attitude rates start afresh, as at the first sample); the biases walk over the whole gap."""
        self._prev_u = None
        self._prev_tilt = None

    def shift_clock(self, dt: float) -> None:
        """Move the time of the previous sample with a clock jump of ``dt`` s."""
        self._prev_t += dt

    @property
    def measures_orientation(self) -> bool:
        """Whether readings carry an orientation quaternion."""
        return bool(self.params["measure_orientation"])

    @property
    def orientation_noise(self) -> float:
        """Std. dev. of the orientation noise (rad, per axis, small rotation in the sensor frame)."""
        return float(self.params["orientation_std_noise"])

    def details(self) -> str:
        return "with orientation" if self.params["measure_orientation"] else ""

    # ------------------------------------------------------------------ simulation
    def true_signals(self, ctx: SensorContext, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Noise-free (angular velocity rad/s, specific force m/s², R_ws 3×3) at time ``t`` (s); updates the history.

        The sensor point's acceleration comes from its velocity in the (rotating) vehicle frame,
        u = v_ref + ω × r (r: the sensor's x, y on the vehicle, m), by the transport theorem:
        a = du/dt + ω × u, where du/dt is the finite difference since the previous sample (0 at the first one).
        For a constant twist this is exact: a vehicle turning at ω reads ω²·|r| towards the centre at lever arm r,
        and v·ω at the reference point. The motion is planar (2D physics): a_world has no z component.
        """
        phys = ctx.physics
        k = ctx.vehicle_index(self)
        r_ws, _ = ctx.sensor_pose(self)
        dt = t - self._prev_t
        if k >= 0:
            _, _, yaw, vx, vy, w = (float(v) for v in phys.state[k])
            pitch, roll = float(phys.pitch[k]), float(phys.roll[k])
        else:
            yaw, vx, vy, w, pitch, roll = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        c, s = math.cos(yaw), math.sin(yaw)
        # velocity of the sensor point, vehicle frame (planar)
        rx, ry = float(self.pose[0]), float(self.pose[1])
        ux = c * vx + s * vy - w * ry
        uy = -s * vx + c * vy + w * rx
        ax, ay = -w * uy, w * ux  # ω × u
        if self._prev_u is not None and dt > 0.0:
            ax += (ux - self._prev_u[0]) / dt
            ay += (uy - self._prev_u[1]) / dt
        a_world = np.array([c * ax - s * ay, s * ax + c * ay, 0.0])
        g = float(ctx.world.params["gravity"])
        f_world = a_world + np.array([0.0, 0.0, g])  # a − g_vec, g_vec = (0, 0, −g)
        # angular velocity in the world: yaw rate + Euler-rate terms of the terrain attitude
        omega_world = np.array([0.0, 0.0, w])
        if self._prev_tilt is not None and dt > 0.0:
            dp = _wrap(pitch - self._prev_tilt[0]) / dt
            dr = _wrap(roll - self._prev_tilt[1]) / dt
            if dp or dr:
                cp, sp = math.cos(pitch), math.sin(pitch)
                # ω = ψ̇ ẑ + θ̇ Rz(ψ) ŷ + φ̇ Rz(ψ) Ry(θ) x̂
                omega_world += np.array([-s * dp + c * cp * dr, c * dp + s * cp * dr, -sp * dr])
        self._prev_t = t
        self._prev_u = (ux, uy)
        self._prev_tilt = (pitch, roll)
        return r_ws.T @ omega_world, r_ws.T @ f_world, r_ws

    def sample(self, ctx: SensorContext, t: float) -> ImuReading:
        """One reading at simulated time ``t`` (s); see the module docstring for the model."""
        dt = t - self._prev_t
        gyro, accel, r_ws = self.true_signals(ctx, t)
        rng = self.stream()
        gyro, accel = self.noise.apply(gyro, accel, dt, rng)
        quat = None
        if self.measures_orientation:
            enu_yaw = 0.0
            geo = ctx.world.georeference
            if geo is not None:
                enu_yaw = float(geo["world_to_enu_rotation_deg"])
            ce, se = math.cos(enu_yaw), math.sin(enu_yaw)
            r = np.array([[ce, -se, 0.0], [se, ce, 0.0], [0.0, 0.0, 1.0]]) @ r_ws
            sigma = self.orientation_noise
            if sigma > 0.0:
                r = r @ so3_exp(rng.normal(0.0, sigma, 3))
            quat = np.array(quaternion_from_rotation(r, normalize=True))
        return ImuReading(stamp=float(t), angular_velocity=gyro, linear_acceleration=accel, orientation=quat,
                          frame=self.name)


def _wrap(a: float) -> float:
    """Angle ``a`` (rad) wrapped to (−π, π]."""
    return math.atan2(math.sin(a), math.cos(a))


def so3_exp(v: Any) -> np.ndarray:
    """Rotation matrix of the rotation vector ``v`` (3,), rad (Rodrigues' formula)."""
    v = np.asarray(v, dtype=float)
    th = float(np.linalg.norm(v))
    k = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    if th < 1e-12:
        return np.eye(3) + k
    return np.eye(3) + (math.sin(th) / th) * k + ((1.0 - math.cos(th)) / (th * th)) * (k @ k)
