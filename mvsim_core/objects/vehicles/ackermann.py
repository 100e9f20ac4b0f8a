"""``ackermann``: car-like steering of the front axle (reference §1.11).

The front wheels always sit at x = ``f_wheels_x`` and y = ±``f_wheels_d``/2, whatever their ``pos`` says.
"""

import math
from collections.abc import Sequence

from mvsim_core.dynamics.command_limits import CommandLimits
from mvsim_core.dynamics.controllers.base import Family
from mvsim_core.objects.vehicles.base import MIN_TRACK, VehicleDynamics
from mvsim_core.objects.wheel import Wheel
from mvsim_core.xml.params import Kind, Param, ParamValues

ACKERMANN_CHASSIS = ((-0.8, -1.0), (-0.8, 1.0), (1.5, 0.9), (1.8, 0.8), (1.8, -0.8), (1.5, -0.9))
ACKERMANN_PARAMS = (
    Param("max_steer_ang_deg", Kind.ANGLE, math.radians(30.0), "rad", positive=True,
          doc="steering limit of the virtual centre wheel"),
    Param("f_wheels_x", Kind.FLOAT, 1.3, "m", doc="front axle x in the vehicle frame"),
    Param("f_wheels_d", Kind.FLOAT, 2.0, "m", positive=True, doc="front track width"),
)


class Ackermann(VehicleDynamics):
    """Wheels ``rl_wheel`` (0, 0.9), ``rr_wheel`` (0, -0.9), ``fl_wheel``, ``fr_wheel`` (front axle)."""

    xml_class = "ackermann"
    family = Family.ACKERMANN
    steerable = True
    wheel_slots = (("rl_wheel", (0.0, 0.9)), ("rr_wheel", (0.0, -0.9)),
                   ("fl_wheel", (1.3, 1.0)), ("fr_wheel", (1.3, -1.0)))
    chassis_mass = 500.0
    chassis_zmin = 0.20
    chassis_zmax = 1.40
    chassis_color = (0xE8, 0x30, 0x00, 255)
    chassis_shape = ACKERMANN_CHASSIS
    PARAMS = ACKERMANN_PARAMS
    max_wheel_speed = 50.0

    def command_limits(self, chassis_mass: float) -> CommandLimits:
        """Default command limits: speed ``max_wheel_speed`` (m/s); steering ±``max_steer_ang_deg``; angular speed
        max_wheel_speed·tan(max_steer)/wheelbase (the tightest turn at top speed, rad/s); torque as for every
        class (:meth:`VehicleDynamics.command_limits`)."""
        speed = self.max_wheel_speed
        steer = self.max_steer
        wb = abs(self.wheelbase)
        omega = speed * math.tan(min(steer, 0.5 * math.pi - 1e-6)) / wb if wb > 0 else math.inf
        return CommandLimits(max_speed=speed, max_omega=omega, max_steer=steer,
                             max_torque=self._max_torque(chassis_mass))

    # ------------------------------------------------------------------ run time
    @property
    def wheelbase(self) -> float:
        """Distance from the rear axle to the front axle (m)."""
        return self.wheels[2].x - self.wheels[0].x

    @property
    def max_steer(self) -> float:
        """Steering limit of the equivalent centre wheel (rad)."""
        return float(self.params["max_steer_ang_deg"])

    def front_wheel_angles(self, steer: float) -> tuple[float, float]:
        """(fl, fr) wheel angles (rad) for the equivalent steering angle ``steer`` (clamped to ±max_steer).

        Ackermann geometry with track w = y_fl − y_fr and wheelbase l: cot(δ_out) = cot(δ) + w/(2l),
        cot(δ_in) = cot(δ_out) − w/l; a positive (left) turn makes the left wheel the inner one.
        """
        delta = min(abs(steer), self.max_steer)
        if delta < 1e-12:
            return 0.0, 0.0
        w = self.wheels[2].y - self.wheels[3].y
        l_ = self.wheelbase
        cot_out = 1.0 / math.tan(delta) + 0.5 * w / l_
        cot_in = cot_out - w / l_
        inner = math.atan(1.0 / cot_in) if cot_in != 0.0 else 0.5 * math.pi
        outer = math.atan(1.0 / cot_out)
        return (inner, outer) if steer > 0 else (-outer, -inner)

    def steer(self, veh, steer: float) -> None:
        """Turn the front wheels for the equivalent steering angle ``steer`` (rad)."""
        self.wheels[2].yaw, self.wheels[3].yaw = self.front_wheel_angles(steer)

    def set_drive(self, veh, t_rl: float, t_rr: float, t_fl: float, t_fr: float) -> None:
        """Per-wheel torques (N·m, negative drives forward)."""
        t = veh.torques
        t[0], t[1], t[2], t[3] = t_rl, t_rr, t_fl, t_fr

    @classmethod
    def extra_tags(cls) -> frozenset[str]:
        # upstream's ackermann.vehicle.xml carries a <drivetrain> that plain ackermann ignores
        return frozenset({"drivetrain"})

    @classmethod
    def geometry_problem(cls, wheels: Sequence[Wheel], params: ParamValues) -> str | None:
        """Besides the track of the rear wheels: a wheelbase (rear axle to ``f_wheels_x``) of at least
        :data:`MIN_TRACK` in length, a front track of at least that much, and a steering limit below 90°."""
        problem = super().geometry_problem(wheels, params)
        if problem is not None:
            return problem
        wb = wheels[2].x - wheels[0].x
        if not abs(wb) >= MIN_TRACK:
            return (f"the front axle (<f_wheels_x> = {wheels[2].x:g} m) is {abs(wb):g} m from the rear wheels (x = "
                    f"{wheels[0].x:g} m); the wheelbase must be at least {MIN_TRACK:g} m")
        if not params["f_wheels_d"] >= MIN_TRACK:
            return f"<f_wheels_d> is {params['f_wheels_d']:g} m; the front track must be at least {MIN_TRACK:g} m"
        if not params["max_steer_ang_deg"] < 0.5 * math.pi:
            return (f"<max_steer_ang_deg> is {math.degrees(params['max_steer_ang_deg']):g}°; a steering limit must be "
                    f"below 90°")
        return None

    @classmethod
    def adjust_wheels(cls, wheels: list[Wheel], params: ParamValues) -> None:
        fx, fd = params["f_wheels_x"], params["f_wheels_d"]
        for w in wheels:
            if w.name == "fl_wheel":
                w.x, w.y = fx, 0.5 * fd
            elif w.name == "fr_wheel":
                w.x, w.y = fx, -0.5 * fd
