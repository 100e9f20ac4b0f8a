"""Vehicles: ``<vehicle:class>`` definitions, ``<vehicle>`` instances and the dynamics-class registry (§1.11).

A dynamics class (one file each in this package) declares its wheels with their default positions, its chassis
defaults, its extra parameters, the controller family it takes, whether it steers and which wheels take a
differential controller's left/right torques. :meth:`VehicleDynamics.from_string` finds a class by its name in world
files. :func:`build_vehicle` reads an instance node and its class node together — the instance wins — with
``<include>``s inside either expanded in place.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from mvsim_core import arguments as arg
from mvsim_core.dynamics.command_limits import CommandGate, CommandLimits
from mvsim_core.dynamics.controllers.base import Family
from mvsim_core.errors import ArgumentValueError, ControllerError, quoted
from mvsim_core.geometry.extent import Extent, posed, prism_corners, wheel_corners
from mvsim_core.objects.block import _footprint_from_visuals, parse_shape
from mvsim_core.objects.vehicles.description import JointState, RobotDescription
from mvsim_core.objects.vehicles.joint_commands import JointCommands, joint_commands_of
from mvsim_core.objects.visual import Visual, parse_visuals
from mvsim_core.objects.wheel import Wheel, parse_wheel
from mvsim_core.outputs import WORLD_FRAME, Output, OutputKind, PlanarOdometry
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.flow import expanded
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Color, Kind, Param, ParamValues, read_params
from mvsim_core.xml.simulable import SIMULABLE_TAGS, SimulableSpec, parse_simulable

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mvsim_core.dynamics.controllers.base import Controller
    from mvsim_core.dynamics.friction.base import FrictionModel
    from mvsim_core.dynamics.physics import Physics
    from mvsim_core.io.csv_logger import VehicleLogger
    from mvsim_core.objects.vehicles.joint_reader import JointReader
    from mvsim_core.sensors.base import Sensor

MIN_TRACK = 1e-3
"""Smallest sideways distance (m) between a vehicle's first two wheels (:meth:`VehicleDynamics.geometry_problem`)."""

SensorFactory = Callable[[XmlNode, ParseContext, str], "Sensor"]
"""Builds a sensor from its ``<sensor>`` element, the parse context and the carrying vehicle's name."""

VEHICLE_TAGS = frozenset({"dynamics", "friction", "sensor", "visual", "odometry", "log_path",
                          "auto_start_recording"}) | SIMULABLE_TAGS


class WheelSide(str, Enum):
    """Which torque of a differential controller (left or right) drives a wheel; ``lr_pattern`` gives one per wheel,
    None for a wheel that gets no torque (a caster). The values are the letters ``"l"`` and ``"r"``."""

    LEFT = "l"
    RIGHT = "r"

    def pick(self, left: float, right: float) -> float:
        """``left`` for a left wheel, ``right`` for a right one."""
        return left if self is WheelSide.LEFT else right


class VehicleDynamics:
    """Base of the dynamics classes (``<dynamics class="...">``).

    Class attributes (declared by each class):
        xml_class: the class name in world files.
        family: controller family (:class:`~mvsim_core.dynamics.controllers.base.Family`).
        steerable: whether the class turns wheels (has ``steer(veh, angle)``); the physics then copies the wheel
            yaws to the wheel arrays and bodies every step.
        wheel_slots: (tag, default (x, y) in m, vehicle frame) of each wheel, in upstream's wheel order.
        chassis_mass (kg), chassis_zmin, chassis_zmax (m), chassis_color, chassis_shape ((x, y) in m, vehicle
            frame): chassis defaults.
        PARAMS: extra child parameters of ``<dynamics>``.
        lr_pattern: the :class:`WheelSide` (or None: no torque) of each wheel, for differential controllers.
        max_wheel_speed: the fastest a wheel's rim may be commanded to go (m/s), a generous physical bound from
            which :meth:`command_limits` derives the speed limits (10 m/s for small robots, 50 m/s for cars).
        max_acceleration: the acceleration (m/s²) that the largest torque command could give the whole vehicle
            through one wheel (:meth:`command_limits`; 5 g).

    Class attributes (derived):
        registry: xml class -> dynamics class, filled when a class is defined.
    """

    xml_class: ClassVar[str] = ""
    family: ClassVar[Family]
    steerable: ClassVar[bool] = False
    wheel_slots: ClassVar[tuple[tuple[str, tuple[float, float]], ...]] = ()
    chassis_mass: ClassVar[float] = 15.0
    chassis_zmin: ClassVar[float] = 0.05
    chassis_zmax: ClassVar[float] = 0.6
    chassis_color: ClassVar[Color] = (255, 0, 0, 255)
    chassis_shape: ClassVar[tuple[tuple[float, float], ...]] = ()
    PARAMS: ClassVar[tuple[Param, ...]] = ()
    lr_pattern: ClassVar[tuple[WheelSide | None, ...]] = (WheelSide.LEFT, WheelSide.RIGHT)
    max_wheel_speed: ClassVar[float] = 10.0
    max_acceleration: ClassVar[float] = 50.0
    registry: ClassVar[dict[str, type[VehicleDynamics]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.xml_class:
            if not isinstance(getattr(cls, "family", None), Family):
                raise TypeError(f"dynamics class {cls.xml_class} declares no controller family")
            if cls.steerable != callable(getattr(cls, "steer", None)):
                raise TypeError(f"dynamics class {cls.xml_class}: steerable must be True exactly when it has steer()")
            VehicleDynamics.registry[cls.xml_class] = cls

    @classmethod
    def from_string(cls, name: str) -> type[VehicleDynamics]:
        """The dynamics class whose ``xml_class`` is ``name``.

        Raises:
            ValueError: unknown name; the message lists the known ones.
        """
        found = VehicleDynamics.registry.get(name)
        if found is None:
            known = ", ".join(VehicleDynamics.registry)
            raise ValueError(f"unknown dynamics class {quoted(name)}; known classes: {known}")
        return found

    def __init__(self, params: ParamValues, wheels: list[Wheel]) -> None:
        self.params = params
        self.wheels = wheels

    def command_limits(self, chassis_mass: float) -> CommandLimits:
        """The default limits of commands to a vehicle of this class (:mod:`mvsim_core.dynamics.command_limits`):
        speed ``max_wheel_speed``; angular speed 2·max_wheel_speed/track (the two wheels of the first pair at
        full speed in opposite directions); torque max_acceleration · total mass (kg) · largest wheel radius; no
        steering limit (the class does not steer)."""
        w0, w1 = self.wheels[0], self.wheels[1]
        track = abs(w0.y - w1.y)
        speed = self.max_wheel_speed
        omega = 2.0 * speed / track if track > 0 else math.inf
        return CommandLimits(max_speed=speed, max_omega=omega, max_torque=self._max_torque(chassis_mass))

    def _max_torque(self, chassis_mass: float) -> float:
        mass = chassis_mass + sum(w.mass for w in self.wheels)
        return self.max_acceleration * mass * max(w.radius for w in self.wheels)

    # ------------------------------------------------------------------ run time: torques
    def set_lr_torques(self, veh: Vehicle, left: float, right: float) -> None:
        """Left/right wheel torques (N·m, negative drives forward) spread over the wheels by ``lr_pattern``."""
        t = veh.torques
        for i, side in enumerate(self.lr_pattern):
            t[i] = 0.0 if side is None else side.pick(left, right)

    def set_lr_feedback(self, veh: Vehicle, left: float, right: float) -> None:
        """The speed loops' reaction (∂torque/∂speed, N·m per m/s) of the left and right sides, as each driven wheel's
        ``k_motor`` = reaction · wheel radius (N·m·s/rad): the loop of a side acts on each wheel it drives as if it
        read that wheel's spin (:mod:`mvsim_core.dynamics.friction.slip`)."""
        k = veh.k_motor
        for i, side in enumerate(self.lr_pattern):
            k[i] = 0.0 if side is None else side.pick(left, right) * self.wheels[i].radius

    @classmethod
    def adjust_wheels(cls, wheels: list[Wheel], params: ParamValues) -> None:
        """Hook for classes whose parameters move wheels (Ackermann front axle)."""

    @classmethod
    def geometry_problem(cls, wheels: Sequence[Wheel], params: ParamValues) -> str | None:
        """What makes this wheel layout unusable for the class's kinematics, or None. The first two wheels (left,
        right) are the encoders of the odometry and of the twist controllers: their sideways distance divides the
        turn rate, so it must be at least :data:`MIN_TRACK`. Classes add their own rules."""
        w0, w1 = wheels[0], wheels[1]
        if not abs(w0.y - w1.y) >= MIN_TRACK:
            return (f"<{w0.name}> and <{w1.name}> are {abs(w0.y - w1.y):g} m apart sideways (y = {w0.y:g} and "
                    f"{w1.y:g} m); the track must be at least {MIN_TRACK:g} m (their pos=\"x y\")")
        return None

    @classmethod
    def extra_tags(cls) -> frozenset[str]:
        return frozenset()

    @classmethod
    def read_extra(cls, dyn: XmlNode, ctx: ParseContext) -> dict[str, Any]:
        """Hook for structured children of ``<dynamics>`` (the drivetrain)."""
        return {}


CHASSIS_ATTRS: tuple[Param, ...] = (
    Param("mass", Kind.FLOAT, math.nan, "kg", positive=True),
    Param("zmin", Kind.FLOAT, math.nan, "m"),
    Param("zmax", Kind.FLOAT, math.nan, "m"),
    Param("color", Kind.COLOR, None),
    Param("linear_damping", Kind.FLOAT, 0.1, "1/s", min=0.0),
    Param("angular_damping", Kind.FLOAT, 0.1, "1/s", min=0.0),
)

ODOMETRY_ATTRS: tuple[Param, ...] = (
    Param("x_multiplier", Kind.FLOAT, 1.0),
    Param("y_multiplier", Kind.FLOAT, 1.0),
    Param("yaw_multiplier", Kind.FLOAT, 1.0),
)

ODOMETRY_MULTIPLIER_STD = 0.02
"""Std. dev. of the odometry multipliers drawn (as N(1, σ²)) for the ones the world file leaves out (upstream's)."""


@dataclass
class Chassis:
    """The vehicle body: mass (kg), prism z range (m, vehicle frame), colour, footprint (P×2, m, CCW), damping."""

    mass: float
    zmin: float
    zmax: float
    color: Color
    footprint: np.ndarray
    linear_damping: float = 0.1
    angular_damping: float = 0.1


BASE_LINK = "base_link"
"""A vehicle's own frame: at its reference point, x forward, z up."""


def odometry_sample(veh: Vehicle) -> PlanarOdometry:
    """``odom`` now: the noisy wheel odometry (x, y, yaw; z the height of the vehicle's root frame, 0 but for a
    vehicle from a URDF, :attr:`RobotDescription.height`; pitch, roll 0) and the twist as the odometry sees it
    (each component times its odometry multiplier), with the vehicle's odometry drift."""
    ox, oy, oyaw = veh.odometry
    vx, vy, wz = veh.twist
    mx, my, myaw = veh.odometry_multipliers
    z = veh.description.height if veh.description is not None else 0.0
    return PlanarOdometry((ox, oy, z, oyaw, 0.0, 0.0), (vx * mx, vy * my, wz * myaw), veh.odometry_std)


def ground_truth_sample(veh: Vehicle) -> PlanarOdometry:
    """``base_pose_ground_truth`` now: the exact pose (world frame) and twist (body frame) of the vehicle's root frame
    (its reference point, raised by :attr:`RobotDescription.height` for a vehicle from a URDF)."""
    pose = veh.pose
    if veh.description is not None and veh.description.height != 0.0:
        x, y, z, yaw, pitch, roll = pose
        pose = (x, y, z + veh.description.height, yaw, pitch, roll)
    return PlanarOdometry(pose, veh.twist, None)


def touching(veh: Vehicle) -> bool:
    """``collision`` now: whether the vehicle touches another body at this step."""
    return veh.collision


def joint_state_sample(veh: Vehicle) -> JointState:
    """``joint_states`` now: :meth:`Vehicle.joint_state`."""
    return veh.joint_state()


def description_text(veh: Vehicle) -> str:
    """``robot_description``: the URDF text of :meth:`Vehicle.robot_description`."""
    return veh.robot_description().urdf


@dataclass
class Vehicle:
    """A vehicle instance as declared in the world file.

    Attributes:
        name: unique name (default ``veh1``, ``veh2``, ...).
        class_name: its ``<vehicle:class>``, or "".
        dynamics: the dynamics-class object (wheels, extra parameters).
        chassis: body description.
        controller: controller description (``mvsim_core.dynamics.controllers``).
        friction: friction-model description (``mvsim_core.dynamics.friction``), one shared by all wheels.
        odometry_multipliers: (x, y, yaw) multipliers of the SE(2) odometry increments.
        odometry_std: (x, y, yaw) relative std. dev. of the odometry increments that the noise model implies:
            :data:`ODOMETRY_MULTIPLIER_STD` for a multiplier drawn at random (the world file does not set it),
            ``|m − 1|`` for one the world file sets (a known calibration error; 0 for an exact 1). Dimensionless:
            the error of an increment of ``d`` metres (radians) is ``odometry_std · d``.
        log_path: prefix of CSV log files; auto_start_recording: start logging at once.
        sensors: name -> sensor, in file order.
        sim: initial pose/velocity, publishing.
        visuals: visual models.
        node: the instance node.
        command_limits: limits of commands (property; :mod:`mvsim_core.dynamics.command_limits`).
    """

    name: str
    class_name: str
    dynamics: VehicleDynamics
    chassis: Chassis
    controller: Controller
    friction: FrictionModel
    odometry_multipliers: tuple[float, float, float]
    log_path: str
    auto_start_recording: bool
    sensors: dict[str, Sensor]
    sim: SimulableSpec
    visuals: list[Visual] = field(default_factory=list)
    node: XmlNode | None = None
    odometry_std: tuple[float, float, float] = (ODOMETRY_MULTIPLIER_STD,) * 3
    description: RobotDescription | None = None  # the user's URDF, when the vehicle came from one (else generated)

    # run-time state, filled by the World once physics starts
    torques: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    omega: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    phi: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    k_motor: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    collision: bool = False
    had_collision: bool = False
    logger: VehicleLogger | None = None  # created by World.start
    _physics: Physics | None = field(default=None, repr=False)
    _index: int = -1
    _gate: CommandGate | None = field(default=None, repr=False)  # created on the first command
    _joints: JointCommands | None = field(default=None, repr=False)  # created on the first joint command
    _generated: RobotDescription | None = field(default=None, repr=False)  # made on the first robot_description()
    _joint_reader: JointReader | None = field(default=None, repr=False)  # made on the first joint_state()
    command_listeners: list[Callable[[str, tuple[float, float, float]], None]] = field(default_factory=list,
                                                                                     repr=False)
    """Called as ``listener(vehicle name, (vx, vy, wz))`` with every twist given to :meth:`set_twist`, as given (before
    the command gate clamps or refuses it), from whatever thread gives it (recorders of ``cmd_vel``)."""

    @property
    def wheels(self) -> list[Wheel]:
        return self.dynamics.wheels

    @property
    def is_animated(self) -> bool:
        """It has a keyframe ``<animation>``: its body follows the track in x, y and yaw (a kinematic body that
        pushes what it meets and is pushed by nothing); z, pitch and roll come from the ground under its wheels, and
        its wheels roll with its motion. Its controller's commands have no effect."""
        return bool(self.sim.keyframes)

    @property
    def pose(self) -> tuple[float, float, float, float, float, float]:
        """Current pose (x, y, z, yaw, pitch, roll) of the reference point, world frame, m / rad."""
        if self._physics is None:
            return self.sim.pose
        return self._physics.pose_of(self._index)

    @property
    def twist(self) -> tuple[float, float, float]:
        """Current (vx, vy, ω) of the reference point in the vehicle frame (m/s, m/s, rad/s)."""
        if self._physics is None:
            return (0.0, 0.0, 0.0)
        t = self._physics.twist[self._index]
        return (float(t[0]), float(t[1]), float(t[2]))

    @property
    def odometry(self) -> tuple[float, float, float]:
        """Noisy wheel odometry (x, y, yaw) in m / rad; starts at (0, 0, 0) wherever the vehicle starts."""
        if self._physics is None:
            return (0.0, 0.0, 0.0)
        o = self._physics.odometry[self._index]
        return (float(o[0]), float(o[1]), float(o[2]))

    def attach_physics(self, physics: Physics, index: int) -> None:
        """Read pose, twist and odometry from ``physics`` arrays at row ``index`` from now on (wiring: the physics
        calls it when it is built).

        Raises:
            ArgumentTypeError: ``physics`` is no Physics, ``index`` no integer.
            ArgumentValueError: ``index`` is no row of ``physics`` (negative, or beyond its vehicles).
        """
        from mvsim_core.dynamics.physics import Physics

        arg.instance("attach_physics", "physics", physics, Physics, "a Physics", self._owner())
        index = arg.integer("attach_physics", "index", index, minimum=0, owner=self._owner())
        if index >= len(physics.names):
            raise ArgumentValueError("attach_physics", "index", f"a row of the physics (< {len(physics.names)}), "
                                                                f"not {index}", self._owner())
        self._physics, self._index = physics, index

    def detach_physics(self) -> None:
        """The vehicle left the world (``World.remove``): pose, twist and odometry are no longer simulated (pose
        reads the declared one, twist and odometry zeros)."""
        self._physics, self._index = None, -1

    @property
    def command_limits(self) -> CommandLimits:
        """The limits of commands to this vehicle (m/s, rad/s, rad, N·m; defaults from its dynamics class, see
        :mod:`mvsim_core.dynamics.command_limits`). Assign a new one to change them, e.g.
        ``veh.command_limits = veh.command_limits.replace(max_speed=1.5)``."""
        return self._command_gate().limits

    @command_limits.setter
    def command_limits(self, limits: CommandLimits) -> None:
        arg.instance("command_limits", "limits", limits, CommandLimits, "a CommandLimits", self._owner())
        self._command_gate().limits = limits

    @property
    def command_gate(self) -> CommandGate:
        """The gate every command and velocity given to this vehicle goes through (refuses NaN/inf, clamps to
        :attr:`command_limits`; :mod:`mvsim_core.dynamics.command_limits`)."""
        return self._command_gate()

    def _command_gate(self) -> CommandGate:
        if self._gate is None:
            self._gate = CommandGate(self.name, self.dynamics.command_limits(self.chassis.mass))
        return self._gate

    def _owner(self) -> str:
        """Who refuses a bad argument, as an error message starts."""
        return f"vehicle '{self.name}'"

    def set_twist(self, vx: float, vy: float, wz: float) -> tuple[float, float, float]:
        """Command a body-frame twist (m/s, m/s, rad/s) to the vehicle's controller, each value clamped to
        :attr:`command_limits`; the twist commanded.

        Raises:
            CommandValueError: a NaN or infinite value (the last good command stays in force); an integer too large
                for a float counts as infinite.
            ArgumentTypeError: a value that is no number (nothing changes).
            ControllerError: the controller does not take twists (``raw``, ``front_steer_pid``).
        """
        if type(vx) is not float or type(vy) is not float or type(wz) is not float:  # the common case costs this
            own = self._owner()
            vx, vy, wz = (arg.real("set_twist", "vx", vx, own), arg.real("set_twist", "vy", vy, own),
                          arg.real("set_twist", "wz", wz, own))
        for listener in self.command_listeners:
            listener(self.name, (vx, vy, wz))
        cmd = self._command_gate().twist(vx, vy, wz)
        try:
            self.controller.set_twist(*cmd)
        except ControllerError as e:
            raise ControllerError(f"vehicle '{self.name}': {e}") from None
        return cmd

    def drive(self, speed: float, steer: float) -> tuple[float, float]:
        """Command a forward speed (m/s) and a steering angle (rad, positive turns left), each clamped to
        :attr:`command_limits`, to the vehicle's controller: ``front_steer_pid`` takes them as given; the twist
        controllers of Ackermann vehicles follow (speed, 0, speed·tan(steer)/wheelbase). The (speed, steer)
        commanded.

        Raises:
            CommandValueError: a NaN or infinite value (the last good command stays in force); an integer too large
                for a float counts as infinite.
            ArgumentTypeError: a value that is no number (nothing changes).
            ControllerError: the controller takes no such command (differential vehicles, ``raw``).
        """
        if type(speed) is not float or type(steer) is not float:
            own = self._owner()
            speed, steer = arg.real("drive", "speed", speed, own), arg.real("drive", "steer", steer, own)
        cmd = self._command_gate().drive(speed, steer)
        try:
            self.controller.drive(*cmd, getattr(self.dynamics, "wheelbase", None))
        except ControllerError as e:
            raise ControllerError(f"vehicle '{self.name}': {e}") from None
        return cmd

    def set_torques(self, torques: Sequence[float], steer: float | None = None
                    ) -> tuple[tuple[float, ...], float | None]:
        """Command raw torques (N·m, negative drives forward) and, on Ackermann vehicles, a steering angle (rad;
        None keeps it) to a ``raw`` controller, each clamped to :attr:`command_limits`; the (torques, steer)
        commanded.

        Raises:
            CommandValueError: a NaN or infinite value (the last good command stays in force); an integer too large
                for a float counts as infinite.
            ArgumentTypeError: ``torques`` is no sequence of numbers, or ``steer`` no number (nothing changes).
            ControllerError: the controller is not ``raw``, or the number of torques is wrong.
        """
        own = self._owner()
        torques = arg.reals("set_torques", "torques", torques, owner=own)
        steer = arg.optional_real("set_torques", "steer", steer, own)
        cmd = self._command_gate().torques(torques, steer)
        try:
            self.controller.set_torques(*cmd)
        except ControllerError as e:
            raise ControllerError(f"vehicle '{self.name}': {e}") from None
        return cmd

    def stop(self) -> None:
        """Zero the controller's command (twist 0; speed or torques 0, keeping the steering angle).

        Raises:
            ControllerError: the controller takes no commands.
        """
        try:
            self.controller.stop()
        except ControllerError as e:
            raise ControllerError(f"vehicle '{self.name}': {e}") from None
        if self._joints is not None:
            self._joints.stopped()

    def attach_wheel_state(self, torques: np.ndarray, omega: np.ndarray, phi: np.ndarray,
                           k_motor: np.ndarray) -> None:
        """Use these views of the world's wheel arrays for torques (N·m), spins (rad/s), spin angles (rad) and the
        controller's feedback on each wheel's spin (N·m·s/rad, :attr:`WheelArrays.k_motor`); wiring: the physics
        calls it when it is built.

        Raises:
            ArgumentTypeError: an argument that is no numpy array.
        """
        for argument, a in (("torques", torques), ("omega", omega), ("phi", phi), ("k_motor", k_motor)):
            arg.instance("attach_wheel_state", argument, a, np.ndarray, "a numpy array", self._owner())
        self.torques, self.omega, self.phi, self.k_motor = torques, omega, phi, k_motor

    def outputs(self) -> tuple[Output, ...]:
        """What this vehicle puts out (:mod:`mvsim_core.outputs`), each in its own frame (:attr:`base_frame`) and
        sampled when an adapter publishes the vehicles' state: ``odom``, the noisy wheel odometry in the ``odom``
        frame (its covariance grows with the path, :attr:`odometry_std`); ``base_pose_ground_truth``, the exact pose
        in the world frame; ``collision``, whether it touches something; ``joint_states``, its description's
        movable joints (:meth:`joint_state`); ``robot_description``, its URDF text (latched)."""
        base = self.base_frame
        return (Output(OutputKind.ODOMETRY, "odom", base, 0.0, options={"parent": "odom"},
                       observe=odometry_sample),
                Output(OutputKind.ODOMETRY, "base_pose_ground_truth", base, 0.0,
                       options={"parent": WORLD_FRAME}, observe=ground_truth_sample),
                Output(OutputKind.COLLISION, "collision", base, 0.0, observe=touching),
                Output(OutputKind.JOINT_STATE, "joint_states", base, 0.0, observe=joint_state_sample),
                Output(OutputKind.ROBOT_DESCRIPTION, "robot_description", base, 0.0, options={"latched": True},
                       observe=description_text))

    @property
    def base_frame(self) -> str:
        """The vehicle's own frame (the child of ``odom``): the root link of its URDF when it came from one, else
        :data:`BASE_LINK`."""
        return self.description.root if self.description is not None else BASE_LINK

    def robot_description(self) -> RobotDescription:
        """Its robot description (:mod:`mvsim_core.objects.vehicles.description`): the user's URDF when the vehicle
        came from one, else one generated from its chassis, wheels and sensors (made once,
        :func:`~mvsim_core.objects.vehicles.generated_urdf.generated_description`)."""
        if self.description is not None:
            return self.description
        if self._generated is None:
            from mvsim_core.objects.vehicles.generated_urdf import generated_description

            self._generated = generated_description(self)
        return self._generated

    def joint_state(self) -> JointState:
        """The positions (rad, m) and rates (rad/s, m/s) of its description's movable joints now: each wheel's spin
        angle and rate, each steering angle, under the description's joint names (the rules per source:
        :mod:`mvsim_core.objects.vehicles.joint_reader`; steering rates are 0)."""
        reader = self._joint_reader
        if reader is None:
            from mvsim_core.objects.vehicles.joint_reader import JointReader

            reader = self._joint_reader = JointReader(self, self.robot_description())
        return reader.read(self)

    def set_joint_commands(self, velocities: Mapping[str, float], positions: Mapping[str, float]
                           ) -> tuple[float, ...]:
        """Command joints by name, as ros2_control's joint command interfaces do: wheel joints by velocity (rad/s),
        steering joints by position (rad). The vehicle's own controller drives them: the commanded wheel rates and
        steering become the twist (or speed and steering angle) they imply, which goes through
        :meth:`set_twist` / :meth:`drive` (same limits and NaN rules); returns what was commanded there.

        Which joints are commandable, how their values map to the twist or drive command, what a mimic joint does
        and what an omitted joint keeps: :mod:`mvsim_core.objects.vehicles.joint_commands`.

        Raises:
            ArgumentValueError: a name that is no commandable joint of the description (the message lists them).
            CommandValueError: a NaN or infinite value (the last good command stays in force).
            ControllerError: the controller takes no such command.
        """
        return joint_commands_of(self).apply(self, velocities, positions)

    def odometry_velocity(self) -> tuple[float, float, float]:
        """Twist (vx, 0, ω) estimated from the spins of the first two wheels (left, right), as wheel encoders would.

        ω = (ω_R·R_R − ω_L·R_L)/(y_L − y_R); vx = ω_L·R_L + ω·y_L. Slip shows up here: it is not ground truth.
        """
        w0, w1 = self.dynamics.wheels[0], self.dynamics.wheels[1]
        r0, r1 = 0.5 * w0.diameter, 0.5 * w1.diameter
        om = self.omega
        w_veh = (om[1] * r1 - om[0] * r0) / (w0.y - w1.y)
        return om[0] * r0 + w_veh * w0.y, 0.0, w_veh

    def extent(self, pose: tuple[float, ...] | None = None) -> Extent:
        """The box (world frame, m) of its chassis prism and wheels (each a box around its cylinder, turned by its
        yaw, resting on the vehicle's z) at ``pose`` (x, y, z, yaw, pitch, roll; m, rad; default: its current
        pose).

        Raises:
            ArgumentTypeError, ArgumentValueError: a ``pose`` that is not 6 finite numbers.
        """
        if pose is not None:
            pose = arg.finite_reals("extent", "pose", pose, 6, self._owner())
        ch = self.chassis
        parts = [prism_corners(ch.footprint, ch.zmin, ch.zmax)]
        parts += [wheel_corners(w.x, w.y, w.yaw, w.diameter, w.width) for w in self.wheels]
        return Extent.of_points(posed(np.concatenate(parts), self.pose if pose is None else pose))

    def summary(self) -> str:
        ctrl = getattr(self.controller, "xml_class", type(self.controller).__name__)
        fric = getattr(self.friction, "xml_class", type(self.friction).__name__)
        sens = ", ".join(f"{n} ({getattr(s, 'xml_class', '?')})" for n, s in self.sensors.items()) or "none"
        x, y, _, yaw, _, _ = self.pose
        return (f"{self.name} [class {self.class_name or '-'}]: dynamics {self.dynamics.xml_class}, "
                f"controller {ctrl}, friction {fric}, {len(self.wheels)} wheels, at ({x:.3g}, {y:.3g}, "
                f"{math.degrees(yaw):.3g}°); sensors: {sens}")


def _first(nodes: Sequence[XmlNode], tag: str) -> XmlNode | None:
    for n in nodes:
        c = n.child(tag)
        if c is not None:
            return c
    return None


def build_vehicle(inst: XmlNode, cls_node: XmlNode | None, ctx: ParseContext, *, name: str,
                  sensor_factory: SensorFactory, class_name: str = "") -> Vehicle:
    """Build a vehicle from its instance node and (optionally) its class node.

    ``sensor_factory(node, ctx, vehicle_name)`` builds each ``<sensor>`` (the loader passes
    :func:`mvsim_core.sensors.base.sensor_from_xml`; sensors sit above objects in the package layers).
    """
    from mvsim_core.dynamics.controllers.base import controller_from_xml
    from mvsim_core.dynamics.friction.base import friction_from_xml

    nodes = [expanded(inst, ctx)] + ([expanded(cls_node, ctx)] if cls_node is not None else [])
    for n in nodes:
        for c in n.children:
            if c.tag not in VEHICLE_TAGS:
                ctx.warn(c, f"unknown tag <{c.tag}> in <{n.tag}> is ignored")

    dyn = _first(nodes, "dynamics")
    if dyn is None:
        raise ctx.error(inst, f"vehicle '{name}' has no <dynamics class=\"...\">; add one (classes: "
                              f"{', '.join(VehicleDynamics.registry)})")
    dclass = ctx.attr(dyn, "class")
    if not dclass:
        raise ctx.error(dyn, "<dynamics> needs a class=\"...\" attribute; classes: "
                             f"{', '.join(VehicleDynamics.registry)}")
    try:
        dcls = VehicleDynamics.from_string(dclass)
    except ValueError as e:
        raise ctx.error(dyn, str(e), attr="class") from None

    known = {s for s, _ in dcls.wheel_slots} | {p.name for p in dcls.PARAMS} | {"chassis", "controller"}
    known |= dcls.extra_tags()
    for c in dyn.children:
        if c.tag not in known:
            ctx.warn(c, f"unknown tag <{c.tag}> in <dynamics class=\"{dclass}\"> is ignored")
    params = read_params(dcls.PARAMS, [dyn], ctx)
    wheels = []
    for slot, default_pos in dcls.wheel_slots:
        wnode = dyn.child(slot)
        if wnode is None:
            ctx.warn(dyn, f"<dynamics class=\"{dclass}\"> has no <{slot}>; using the default wheel")
        wheels.append(parse_wheel(slot, wnode, default_pos, ctx))
    dcls.adjust_wheels(wheels, params)
    problem = dcls.geometry_problem(wheels, params)
    if problem is not None:
        raise ctx.error(dyn, f"vehicle '{name}': {problem}")
    dynamics = dcls(params, wheels)
    for k, v in dcls.read_extra(dyn, ctx).items():
        setattr(dynamics, k, v)

    chassis = _read_chassis(dyn.child("chassis"), dcls, ctx, name)
    controller = controller_from_xml(dyn.child("controller"), ctx, dcls.family)
    friction = friction_from_xml(_first(nodes, "friction"), ctx)

    # odometry noise: three draws per vehicle, always, so the random sequence does not depend on what is written
    rng = ctx.rng
    sd = ODOMETRY_MULTIPLIER_STD
    defaults = (rng.normal(1.0, sd), rng.normal(1.0, sd), rng.normal(1.0, sd))
    odo = _first(nodes, "odometry")
    mult = defaults
    odo_std = (sd, sd, sd)
    if odo is not None:
        ov = read_params(ODOMETRY_ATTRS, [odo], ctx, attrs=True)
        given = [p.name in ov.where for p in ODOMETRY_ATTRS]
        mx, my, myaw = (float(ov[p.name]) if g else d for p, d, g in zip(ODOMETRY_ATTRS, defaults, given, strict=True))
        mult = (mx, my, myaw)
        sx, sy, syaw = (abs(m - 1.0) if g else sd for m, g in zip(mult, given, strict=True))
        odo_std = (sx, sy, syaw)
    log_node = _first(nodes, "log_path")
    log_path = ctx.text(log_node) if log_node is not None else ""
    asr = _first(nodes, "auto_start_recording")
    auto_rec = False
    if asr is not None:
        auto_rec = ctx.text(asr).lower() in ("true", "1")

    sim = parse_simulable(nodes, ctx, what="vehicle", name=name)
    sensors: dict[str, Sensor] = {}
    for n in nodes:
        for snode in n.children_named("sensor"):
            s = sensor_factory(snode, ctx, name)
            if s.name in sensors:
                raise ctx.error(snode, f"duplicate sensor name '{s.name}' in vehicle '{name}'; give each sensor a "
                                       f"unique name=\"...\"")
            sensors[s.name] = s
    visuals = []
    for n in nodes:
        visuals.extend(parse_visuals(n, ctx))
    if chassis.footprint.size == 0:
        where = dyn.child("chassis") or dyn
        fp = _footprint_from_visuals(visuals, ctx, where, name)[0]
        if fp is None:  # nothing to measure: the outline of its wheels, which it has at least
            fp = wheels_outline(wheels)
            ctx.warn(where, f"<shape_from_visual/>: vehicle '{name}' has no visual model to measure; its chassis "
                            f"stands in as the outline of its wheels ({np.ptp(fp[:, 0]):.3g} x {np.ptp(fp[:, 1]):.3g} "
                            "m); give the chassis a <shape> to set it")
        chassis.footprint = fp
    _check_body(chassis, wheels, dyn, ctx, name)
    return Vehicle(name=name, class_name=class_name, dynamics=dynamics, chassis=chassis, controller=controller,
                   friction=friction, odometry_multipliers=mult, odometry_std=odo_std, log_path=log_path,
                   auto_start_recording=auto_rec, sensors=sensors, sim=sim, visuals=visuals, node=inst)


def wheels_outline(wheels: Sequence[Wheel]) -> np.ndarray:
    """Convex outline (P×2, vehicle frame, m, counter-clockwise) of the wheels' boxes at their mounting yaws."""
    from mvsim_core.dynamics.fixtures import wheel_box
    from mvsim_core.io.meshes import convex_hull_2d

    return convex_hull_2d(np.vstack([wheel_box(w, w.yaw) for w in wheels]))


def _check_body(chassis: Chassis, wheels: Sequence[Wheel], dyn: XmlNode, ctx: ParseContext, name: str) -> None:
    """Refuse, at the ``<chassis>`` (or ``<dynamics>``), a chassis and wheels that Box2D or the terrain contacts
    cannot simulate (:mod:`mvsim_core.dynamics.body_check`, :func:`~mvsim_core.dynamics.outline_band.band_bytes`).
    """
    from mvsim_core.dynamics.body_check import rigid_body_problem
    from mvsim_core.dynamics.outline_band import band_bytes, band_discs
    from mvsim_core.memory_budget import budget_message, over_budget

    where = dyn.child("chassis") or dyn
    problem = rigid_body_problem(chassis.footprint, chassis.mass, wheels)
    if problem is not None:
        raise ctx.error(where, f"vehicle '{name}': {problem}")
    need = band_bytes(chassis.footprint, band_discs(wheels))
    if over_budget(need, 1):
        raise ctx.error(where, budget_message(f"vehicle '{name}': finding terrain steps around its outline", need, 1,
                                              "check the chassis <shape> and the wheel positions (metres)"))


def _read_chassis(node: XmlNode | None, dcls: type[VehicleDynamics], ctx: ParseContext, name: str) -> Chassis:
    shape = np.array(dcls.chassis_shape, dtype=float)
    if node is None:
        return Chassis(dcls.chassis_mass, dcls.chassis_zmin, dcls.chassis_zmax, dcls.chassis_color, shape)
    p = read_params(CHASSIS_ATTRS, [node], ctx, attrs=True)
    mass = dcls.chassis_mass if math.isnan(p.mass) else p.mass
    zmin = dcls.chassis_zmin if math.isnan(p.zmin) else p.zmin
    zmax = dcls.chassis_zmax if math.isnan(p.zmax) else p.zmax
    if zmax < zmin:
        raise ctx.error(node, f"chassis of '{name}': zmax ({zmax:g} m) is below zmin ({zmin:g} m)")
    color = p.color if p.color is not None else dcls.chassis_color
    s = node.child("shape")
    if s is not None:
        shape = parse_shape(s, ctx)
    elif node.child("shape_from_visual") is not None:
        shape = np.zeros((0, 2))  # resolved from the vehicle's visuals by the caller
    for c in node.children:
        if c.tag not in ("shape", "shape_from_visual"):
            ctx.warn(c, f"unknown tag <{c.tag}> in <chassis> is ignored")
    return Chassis(mass, zmin, zmax, color, shape, p.linear_damping, p.angular_damping)
