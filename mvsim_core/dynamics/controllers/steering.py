"""Shared run-time logic of the Ackermann controllers: steering from a twist and the front-wheel speed PIDs.

Frames: the vehicle frame (x forward, y left). Wheel order of Ackermann vehicles: rl, rr, fl, fr.
Torque sign: negative torque drives forward (upstream's convention), so torque = −PID output.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

from mvsim_core.dynamics.controllers.pid import Pid

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.ackermann import Ackermann
    from mvsim_core.objects.vehicles.base import Vehicle

RL, RR, FL, FR = 0, 1, 2, 3


def steer_from_twist(vx: float, omega: float, wheelbase: float) -> float:
    """Equivalent (centre-wheel) steering angle that makes a car-like vehicle follow (vx, ω): atan(L·ω/vx) (rad)."""
    if omega == 0.0:
        return 0.0
    if vx == 0.0:
        return math.copysign(0.5 * math.pi, omega)
    return math.atan(wheelbase / (vx / omega))


def wheel_longitudinal_speed(veh: Vehicle, i: int, vx: float, omega: float, wheel_yaw: float) -> float:
    """Speed of wheel ``i`` along its own heading ``wheel_yaw`` when the vehicle moves with twist (vx, 0, ω) (m/s)."""
    w = veh.wheels[i]
    ux = vx - omega * w.y
    uy = omega * w.x
    return math.cos(wheel_yaw) * ux + math.sin(wheel_yaw) * uy


def front_wheel_pids(veh: Vehicle, pids: tuple[Pid, Pid], vx_sp: float, omega_sp: float, steer: float,
                     dt: float) -> tuple[float, float]:
    """Torques (N·m, negative forward) of the two front wheels following (vx_sp, ω_sp) with steering ``steer``.

    Desired wheel speeds come from the twist setpoint and the wheel angles that ``steer`` will produce; measured ones
    from the wheel-odometry twist estimate and the wheels' current angles.
    """
    dyn = cast("Ackermann", veh.dynamics)  # these controllers are registered for Ackermann families only
    fl_des, fr_des = dyn.front_wheel_angles(steer)
    sp_fl = wheel_longitudinal_speed(veh, FL, vx_sp, omega_sp, fl_des)
    sp_fr = wheel_longitudinal_speed(veh, FR, vx_sp, omega_sp, fr_des)
    vx, _, w = veh.odometry_velocity()
    act_fl = wheel_longitudinal_speed(veh, FL, vx, w, veh.wheels[FL].yaw)
    act_fr = wheel_longitudinal_speed(veh, FR, vx, w, veh.wheels[FR].yaw)
    return -pids[0].step(sp_fl - act_fl, dt, sp_fl), -pids[1].step(sp_fr - act_fr, dt, sp_fr)
