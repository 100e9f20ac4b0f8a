"""``<controller class="...">`` inside ``<dynamics>``: what turns commands into wheel torques (reference §1.11).

Which controllers exist depends on the vehicle's dynamics *family*:

============================  ==================================================================================
family                        controller classes
============================  ==================================================================================
``differential`` (also        ``raw``, ``twist_pid``, ``twist_ideal``, ``trajectory``
``differential_3_wheels``,
``differential_4_wheels``)
``ackermann``                 ``raw``, ``front_steer_pid``, ``twist_front_steer_pid``, ``twist_ideal``, ``trajectory``
``ackermann_drivetrain``      ``raw``, ``front_steer_pid``, ``twist_front_steer_pid``
============================  ==================================================================================

Each (family, class) pair is one Python class registered here by :meth:`Controller.__init_subclass__`. A vehicle
without ``<controller>`` gets ``raw``. Setpoints written in the element (``V``, ``W``, ``STEER_ANG``, raw torques)
are the initial commands.

Commands: each class declares the :class:`Command` kinds it accepts (``commands``, the native one first) and
implements their methods — :meth:`Controller.set_twist`, :meth:`Controller.drive`, :meth:`Controller.set_torques` and
:meth:`Controller.stop`; the others raise :class:`~mvsim_core.errors.ControllerError`. The ROS node, the ZMQ services
and the viewer's keys go through these and never look at the controller's class.

Units: speeds m/s, angular speeds written in deg/s and stored in rad/s, angles written in degrees and stored in rad,
torques N·m (negative wheel torque drives forward, as upstream).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from mvsim_core import arguments as arg
from mvsim_core.errors import ArgumentValueError, CommandValueError, ControllerError, quoted
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.flow import expanded
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Param, ParamValues, read_params, table_names, warn_unknown_children

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.base import Vehicle

DEFAULT_CLASS = "raw"


class Family(Enum):
    """Dynamics families that share a set of controllers."""

    DIFFERENTIAL = "differential"
    ACKERMANN = "ackermann"
    ACKERMANN_DRIVETRAIN = "ackermann_drivetrain"

    @classmethod
    def parse(cls, value: Family | str) -> Family:
        """A :class:`Family` from itself, its value, or a dynamics class name (``differential_4_wheels``, ...)."""
        if isinstance(value, Family):
            return value
        fam = _DYNAMICS_FAMILY.get(value)
        if fam is None:
            known = ", ".join(_DYNAMICS_FAMILY)
            raise ValueError(f"unknown dynamics class {quoted(value)}; known: {known}")
        return fam


_DYNAMICS_FAMILY: dict[str, Family] = {
    "differential": Family.DIFFERENTIAL,
    "differential_3_wheels": Family.DIFFERENTIAL,
    "differential_4_wheels": Family.DIFFERENTIAL,
    "ackermann": Family.ACKERMANN,
    "ackermann_drivetrain": Family.ACKERMANN_DRIVETRAIN,
}


class Command(Enum):
    """A kind of command a controller may accept; each is one method of :class:`Controller` (units: m/s, rad/s,
    rad, N·m).

    ``TWIST``
        :meth:`Controller.set_twist` (vx, vy, ω) — ROS ``cmd_vel``, ZMQ ``set_controller_twist``. Current command:
        ``setpoint`` (:class:`Twist2D`).
    ``DRIVE``
        :meth:`Controller.drive` (speed, steering angle) — ROS ``ackermann_cmd``. Current command (when it is the
        native command): ``speed``, ``steer_angle``.
    ``TORQUES``
        :meth:`Controller.set_torques` (one torque per powered wheel or the drivetrain, and a steering angle when
        ``steering``) — no feedback. Current command: ``torques``, ``steer_angle``.
    """

    TWIST = "twist"
    DRIVE = "drive"
    TORQUES = "torques"


class Twist2D(NamedTuple):
    """A planar velocity in the vehicle frame: vx, vy (m/s), omega (rad/s)."""

    vx: float = 0.0
    vy: float = 0.0
    omega: float = 0.0


class Controller:
    """Base of every controller.

    Class attributes (per subclass):
        xml_class: value of ``class="..."``.
        families: the dynamics families the class is registered for.
        commands: the :class:`Command` kinds accepted, the native one (what the viewer's keys change) first.
        accepts_twist: ``Command.TWIST in commands`` (derived).
        steering: whether the commands carry a steering angle (``steer_angle``).
        SPEED_STEP, OMEGA_STEP, STEER_STEP, TORQUE_STEP: what one key press of the viewer's teleop adds to the
            native command: m/s (``w``/``s``), rad/s (``a``/``d`` on twists), rad (``a``/``d`` on steering
            angles), N·m (``w``/``s`` on torques).
        PARAMS: parameters with upstream defaults and units.
        IGNORED_TAGS: tags accepted without effect and without a warning (see each class).
        CHILD_TAGS: child elements the class reads itself (besides ``PARAMS``).
        friction_in_step: for controllers with an :meth:`ideal_twist`: whether the wheels' friction (and the slope
            force) still acts on the chassis during the Box2D step, the wheels spinning by the friction law, before
            the twist is imposed again after it (``twist_ideal``, as the C++ engine does); False: no force, the
            wheels roll without slip.
        registry: (family, xml_class) -> class, filled automatically.

    Attributes:
        family: the vehicle's family.
        params: typed parameter values.
        node: the ``<controller>`` element, or None when the vehicle has none.
    """

    xml_class: ClassVar[str] = ""
    families: ClassVar[tuple[Family, ...]] = ()
    commands: ClassVar[tuple[Command, ...]] = ()
    accepts_twist: ClassVar[bool] = False
    steering: ClassVar[bool] = False
    SPEED_STEP: ClassVar[float] = 0.1
    OMEGA_STEP: ClassVar[float] = math.radians(2.0)
    STEER_STEP: ClassVar[float] = math.radians(1.0)
    TORQUE_STEP: ClassVar[float] = 0.0
    PARAMS: ClassVar[tuple[Param, ...]] = ()
    IGNORED_TAGS: ClassVar[frozenset[str]] = frozenset()
    CHILD_TAGS: ClassVar[frozenset[str]] = frozenset()
    friction_in_step: ClassVar[bool] = False
    registry: ClassVar[dict[tuple[Family, str], type[Controller]]] = {}
    NOT_STATE: ClassVar[frozenset[str]] = frozenset({"family", "params", "node", "_bound"})
    """Attributes that are configuration or wiring, not run-time state: :meth:`save_state` leaves them out and
    :meth:`restore_state` keeps them as they are (``_bound``: the batch row the physics binds a setpoint to)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.accepts_twist = Command.TWIST in cls.commands
        for fam in cls.__dict__.get("families", ()):
            Controller.registry[(fam, cls.xml_class)] = cls

    def __init__(self, *, family: Family, params: ParamValues, node: XmlNode | None = None) -> None:
        self.family = family
        self.params = params
        self.node = node

    # ------------------------------------------------------------------ construction
    @classmethod
    def lookup(cls, family: Family | str, xml_class: str) -> type[Controller] | None:
        """The class registered for (family, xml_class), or None."""
        return Controller.registry.get((Family.parse(family), xml_class))

    @classmethod
    def known_classes(cls, family: Family | str) -> list[str]:
        """Controller classes available for ``family``, sorted."""
        fam = Family.parse(family)
        return sorted(name for f, name in Controller.registry if f is fam)

    @classmethod
    def from_xml(cls, node: XmlNode | None, ctx: ParseContext, family: Family | str) -> Controller:
        """Build the controller of a ``<controller class="...">`` for a vehicle of ``family``.

        Args:
            node: the element, or None for the default ``raw`` controller.
            ctx: parse context.
            family: a :class:`Family`, its value, or the vehicle's dynamics class name.

        Raises:
            WorldFileError: missing class, a class not available for the family (the message names the class, the
                family and the known classes), or a bad value.
        """
        fam = Family.parse(family)
        if node is None:
            target = cls.lookup(fam, DEFAULT_CLASS)
            assert target is not None
            values = ParamValues()
            for p in target.PARAMS:
                values[p.name] = p.default
            ctl = target(family=fam, params=values, node=None)
            ctl._configure(ctx)
            return ctl
        known = ", ".join(cls.known_classes(fam))
        name = ctx.attr(node, "class")
        if not name:
            raise ctx.error(node, f'<controller> needs the attribute class="..."; controllers of {fam.value} '
                                  f'vehicles: {known}')
        target = cls.lookup(fam, name)
        if target is None:
            elsewhere = sorted(f.value for f, n in Controller.registry if n == name)
            hint = f' ("{name}" exists only for {", ".join(elsewhere)} vehicles)' if elsewhere else ""
            raise ctx.error(node, f'unknown controller class "{name}" for {fam.value} dynamics{hint}; '
                                  f'controllers of {fam.value} vehicles: {known}', attr="class")
        node = expanded(node, ctx)  # <include>, <if>, <variable> inside the element (a trajectory's waypoints)
        warn_unknown_children(node, table_names(target.PARAMS) | target.IGNORED_TAGS | target.CHILD_TAGS, ctx,
                              f'<controller class="{name}">')
        ctl = target(family=fam, params=read_params(target.PARAMS, [node], ctx), node=node)
        ctl._configure(ctx)
        return ctl

    def _configure(self, ctx: ParseContext) -> None:
        """Subclass hook: derive setpoints and run cross-parameter checks."""

    # ------------------------------------------------------------------ state (World.reset)
    def save_state(self) -> dict[str, Any]:
        """A deep copy of everything the controller changes while running: setpoints, PID integrators, its own
        clock, lazily built helpers (every attribute except :attr:`NOT_STATE`). Generic, so that every class
        (present and future) resets completely."""
        return copy.deepcopy({k: v for k, v in vars(self).items() if k not in self.NOT_STATE})

    def restore_state(self, saved: dict[str, Any]) -> None:
        """Go back to a :meth:`save_state` result: attributes made since are dropped (a PID pair built on the first
        step is built again), the others take (copies of) their saved values."""
        for k in [k for k in vars(self) if k not in self.NOT_STATE]:
            delattr(self, k)
        vars(self).update(copy.deepcopy(saved))

    def where(self, name: str) -> XmlNode | None:
        """Element where parameter ``name`` was written (else the ``<controller>`` element)."""
        return self.params.where.get(name, self.node)

    # ------------------------------------------------------------------ commands
    def _finite(self, *named: tuple[str, float]) -> None:
        """Refuse a command with a NaN or infinite value (commands given to the controller directly; the vehicle's
        verbs check and clamp before, :mod:`mvsim_core.dynamics.command_limits`).

        Raises:
            CommandValueError: naming the field.
        """
        for field, value in named:
            if not math.isfinite(value):
                raise CommandValueError("", field, value, owner=f'controller "{self.xml_class}"')

    def _owner(self) -> str:
        """Who refuses a bad argument, as an error message starts."""
        return f'controller "{self.xml_class}"'

    def _real(self, method: str, argument: str, value: Any) -> float:
        """``value`` as a float through :func:`mvsim_core.arguments.real` (10**400 is inf; no number: an
        :class:`~mvsim_core.errors.ArgumentTypeError` naming this controller)."""
        return value if type(value) is float else arg.real(method, argument, value, self._owner())

    def _wheelbase(self, wheelbase: Any) -> float | None:
        """A ``drive`` command's wheelbase (m) as a float, or None.

        Raises:
            ArgumentTypeError: no number.
            ArgumentValueError: not finite and > 0.
        """
        if wheelbase is None:
            return None
        w = arg.real("drive", "wheelbase", wheelbase, self._owner())
        if not (math.isfinite(w) and w > 0):
            raise ArgumentValueError("drive", "wheelbase", f"a finite length > 0 m, not {w}", self._owner())
        return w

    def accepts(self, kind: Command) -> bool:
        """Whether the controller takes commands of this kind."""
        return kind in self.commands

    def set_twist(self, vx: float, vy: float, omega: float) -> None:
        """Command a body-frame twist (m/s, m/s, rad/s).

        Raises:
            ControllerError: the controller does not take twist commands (``raw``, ``front_steer_pid``).
        """
        raise ControllerError(f'controller "{self.xml_class}" does not accept twist commands; use twist_pid, '
                              f'twist_ideal or twist_front_steer_pid')

    def drive(self, speed: float, steer: float, wheelbase: float | None = None) -> None:
        """Command a forward speed (m/s) and a steering angle (rad, positive turns left), as an Ackermann drive
        command; ``wheelbase`` (m) lets twist controllers turn it into v, ω = v·tan(steer)/wheelbase.

        Raises:
            ControllerError: the controller takes no such command (differential vehicles, ``raw``).
        """
        raise ControllerError(f'controller "{self.xml_class}" ({self.family.value}) does not accept speed and '
                              f'steering commands; use front_steer_pid, twist_front_steer_pid or twist_ideal on an '
                              f'Ackermann vehicle')

    def set_torques(self, torques: Sequence[float], steer: float | None = None) -> None:
        """Command raw torques (N·m, negative drives forward) and, for steering controllers, a steering angle (rad;
        None keeps the current one).

        Raises:
            ControllerError: the controller is not ``raw``, or the number of torques is wrong.
        """
        raise ControllerError(f'controller "{self.xml_class}" does not accept raw torque commands; use raw')

    def stop(self) -> None:
        """Zero the native command: twist 0; speed 0 keeping the steering angle; torques 0 keeping the steering.

        Raises:
            ControllerError: the controller takes no commands.
        """
        raise ControllerError(f'controller "{self.xml_class}" takes no commands')

    # ------------------------------------------------------------------ run time
    def control(self, veh: Vehicle, dt: float) -> None:
        """Set the wheel torques (and steering) of ``veh`` for one physics step of ``dt`` seconds."""
        raise NotImplementedError(f"{type(self).__name__} has no control law")

    def ideal_twist(self) -> tuple[float, float, float] | None:
        """For kinematic (ideal) controllers, the body-frame twist to impose after each step; else None."""
        return None

    def summary(self) -> str:
        return f"{self.xml_class} ({self.family.value})"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.summary()}>"


class TwistController(Controller):
    """A controller that follows a twist setpoint (``V`` m/s, ``W`` deg/s written, rad/s stored).

    Attributes:
        setpoint: the commanded twist (vx, vy, omega); vy is ignored by non-holonomic vehicles.
    """

    commands: ClassVar[tuple[Command, ...]] = (Command.TWIST,)
    _bound = None  # array row mirroring (vx, ω) for batch controllers

    def __init__(self, *, family: Family, params: ParamValues, node: XmlNode | None = None) -> None:
        super().__init__(family=family, params=params, node=node)
        self.setpoint = Twist2D()
        self._bound = None

    def _configure(self, ctx: ParseContext) -> None:
        self.setpoint = Twist2D(float(self.params.get("V", 0.0)), 0.0, float(self.params.get("W", 0.0)))

    def set_twist(self, vx: float, vy: float, omega: float) -> None:
        """Command a body-frame twist (m/s, m/s, rad/s), as given (``Vehicle.set_twist`` clamps it first).

        Raises:
            CommandValueError: a NaN or infinite value (the last good command stays); an integer too large for a
                float counts as infinite.
            ArgumentTypeError: a value that is no number (nothing changes).
        """
        if type(vx) is not float or type(vy) is not float or type(omega) is not float:  # the common case: this
            vx, vy, omega = (self._real("set_twist", "vx", vx), self._real("set_twist", "vy", vy),
                             self._real("set_twist", "wz", omega))
        if not math.isfinite(vx + vy + omega):  # one of them is NaN or inf (or they overflow): find which
            self._finite(("vx", vx), ("vy", vy), ("wz", omega))
        self.setpoint = Twist2D(vx, vy, omega)
        if self._bound is not None:
            self._bound[0], self._bound[1] = self.setpoint.vx, self.setpoint.omega

    def drive(self, speed: float, steer: float, wheelbase: float | None = None) -> None:
        """Command (speed m/s, steering rad) as the twist (speed, 0, speed·tan(steer)/wheelbase), for the classes of
        car-like vehicles that list :attr:`Command.DRIVE` in ``commands``.

        Raises:
            ControllerError: a class without ``Command.DRIVE`` (differential vehicles), or no wheelbase given.
            CommandValueError: a NaN or infinite value (an integer too large for a float counts as infinite).
            ArgumentTypeError: a value that is no number (nothing changes).
            ArgumentValueError: a wheelbase that is not finite and > 0.
        """
        speed, steer = self._real("drive", "speed", speed), self._real("drive", "steer", steer)
        wheelbase = self._wheelbase(wheelbase)
        if Command.DRIVE not in self.commands:
            super().drive(speed, steer, wheelbase)
        if not wheelbase:
            raise ControllerError(f'controller "{self.xml_class}" needs the vehicle\'s wheelbase to turn a steering '
                                  f'angle into a twist (use Vehicle.drive)')
        self._finite(("speed", speed), ("steer", steer))
        self.set_twist(speed, 0.0, speed * math.tan(steer) / wheelbase)

    def stop(self) -> None:
        """Command the twist (0, 0, 0)."""
        self.set_twist(0.0, 0.0, 0.0)

    def restore_state(self, saved: dict[str, Any]) -> None:
        """As :meth:`Controller.restore_state`; a bound batch row gets the restored setpoint too."""
        super().restore_state(saved)
        if self._bound is not None:
            self._bound[0], self._bound[1] = self.setpoint.vx, self.setpoint.omega

    def bind_setpoint(self, row) -> None:
        """Mirror (vx, ω) of every future setpoint into ``row`` (a batch controller's array row)."""
        self._bound = row
        row[0], row[1] = self.setpoint.vx, self.setpoint.omega

    def summary(self) -> str:
        sp = self.setpoint
        return f"{self.xml_class} ({self.family.value}, v={sp.vx:g} m/s, ω={sp.omega:g} rad/s)"


def controller_from_xml(node: XmlNode | None, ctx: ParseContext, family: Family | str) -> Controller:
    """Build the controller of a ``<controller>`` element (None: ``raw``) for a vehicle of ``family``.

    Same as :meth:`Controller.from_xml`; every controller class is registered once
    :mod:`mvsim_core.dynamics.controllers` is imported (importing this module does that).
    """
    return Controller.from_xml(node, ctx, family)
