"""Typed errors raised by mvsim_core.

Every user-facing error says *where* (file and line, when there is one) and *what to do*.
The CLI prints ``str(error)`` without a traceback and exits with status 2.
"""

from __future__ import annotations

import math
import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    """``text`` with every control character (newlines included) written as an escape (``\\n``, ``\\x1f``), so
    that a message prints as one line and shows what was really there."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def quoted(value: str, limit: int = 200) -> str:
    """``value`` as an error message quotes it: in single quotes, control characters escaped (:func:`one_line`),
    and cut after ``limit`` characters (``…`` and the full length follow)."""
    shown = one_line(value[:limit])
    if len(value) > limit:
        shown += f"…' ({len(value)} characters)"
        return "'" + shown
    return f"'{shown}'"


class MvsimError(Exception):
    """Base class of every error mvsim_core raises on purpose."""


class WorldFileError(MvsimError):
    """A world file (or a file it includes) is wrong.

    Attributes:
        file: path of the file where the problem is (as given / resolved), or "" when unknown.
        line: 1-based line number in that file, or 0 when unknown.
        message: what is wrong and how to fix it.
    """

    def __init__(self, file: str, line: int, message: str) -> None:
        self.file = str(file)
        self.line = int(line)
        self.message = message
        super().__init__(self.__str__())

    def __str__(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}: {self.message}"
        if self.file:
            return f"{self.file}: {self.message}"
        return self.message

    def __reduce__(self):  # keep pickling working with the 3-argument constructor
        return (type(self), (self.file, self.line, self.message))


class ExpressionError(MvsimError):
    """A ``$f{...}`` expression cannot be parsed or evaluated.

    Attributes:
        message: what is wrong.
        position: 0-based character offset inside the expression text (-1 when not applicable).
    """

    def __init__(self, message: str, position: int = -1) -> None:
        self.message = message
        self.position = position
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (self.message, self.position))


class AssetError(MvsimError):
    """A file referenced by a world (map, image, mesh, DEM) is missing or unreadable.

    The world loader turns it into a :class:`WorldFileError` at the referencing tag.
    """

    def __init__(self, path: str, message: str) -> None:
        self.path = str(path)
        self.message = message
        super().__init__(f"{path}: {message}")

    def __reduce__(self):
        return (type(self), (self.path, self.message))


class ControllerError(MvsimError):
    """A command was sent to a vehicle whose controller cannot take it."""


class CommandValueError(ControllerError, ValueError):
    """A command carries a NaN or infinite value: it is refused and the vehicle keeps its last good command
    (:mod:`mvsim_core.dynamics.command_limits`).

    Attributes:
        vehicle: the vehicle's name ("" when the command went to a controller directly).
        field: the refused field of the command (``vx``, ``vy``, ``wz``, ``speed``, ``steer``, ``torques[i]``).
        value: its value (NaN or ±inf).
        owner: who refused it, as the message starts (default ``vehicle '<vehicle>'``; a controller called directly
            says ``controller "twist_pid"``).
    """

    def __init__(self, vehicle: str, field: str, value: float, owner: str = "") -> None:
        self.vehicle = vehicle
        self.field = field
        self.value = float(value)
        self.owner = owner or f"vehicle '{vehicle}'"
        super().__init__(f"{self.owner}: {field} is {self.value}; command ignored, the last good one stays")

    def __reduce__(self):
        return (type(self), (self.vehicle, self.field, self.value, self.owner))


class StateValueError(MvsimError, ValueError):
    """A request to put an object somewhere (``World.set_pose``, ``set_velocity``, ``spawn(pose=...)``, and the ZMQ
    and ROS services built on them) carries a value that is NaN, infinite or beyond its bound: it is refused and
    nothing changes (:mod:`mvsim_core.dynamics.command_limits`).

    Attributes:
        verb: what was asked (``set_pose``, ``set_velocity``, ``spawn``).
        name: the object's name.
        field: the refused field (``x``, ``y``, ``yaw``, ``vx``, ``vy``, ``wz``).
        value: its value.
        bound: the largest magnitude allowed (``math.inf`` for a non-finite value).
        unit: the field's unit (``m``, ``rad``, ``m/s``, ``rad/s``).
    """

    def __init__(self, verb: str, name: str, field: str, value: float, bound: float, unit: str) -> None:
        self.verb = verb
        self.name = name
        self.field = field
        self.value = float(value)
        self.bound = float(bound)
        self.unit = unit
        if bound == float("inf"):
            what = f"{field} is {self.value}; it must be a finite number"
        else:
            what = f"{field} = {self.value:g} {unit} is beyond ±{self.bound:g} {unit}"
        super().__init__(f"{verb}('{name}'): {what}; refused, nothing changed")

    def __reduce__(self):
        return (type(self), (self.verb, self.name, self.field, self.value, self.bound, self.unit))


class SnapshotError(MvsimError):
    """A world snapshot cannot be taken or restored exactly (``World.snapshot`` / ``World.restore``): a world that
    does not hold the snapshot's objects, or a Box2D build whose memory layout is not the expected one."""


def _shown(value: object, limit: int = 60) -> str:
    """``value`` as an error message shows a given argument: its type and a short repr (an int's digits counted
    rather than printed when there are many: ``10**400`` is ``int of 401 digits``; Python prints no more than
    4300)."""
    if type(value) is int and abs(value) >= 10**30:
        return f"int of {math.floor(math.log10(abs(value))) + 1} digits"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a hostile __repr__ must not hide the real error
        text = f"<{type(value).__name__} object>"
    text = one_line(text)
    if len(text) > limit:
        text = text[:limit] + "…"
    return f"{type(value).__name__} {text}"


class ArgumentTypeError(MvsimError, TypeError):
    """A public API call got an argument of the wrong type (``None`` or ``"1.0"`` where a number goes, a list where
    a name goes): it is refused and nothing changes (:mod:`mvsim_core.arguments`).

    Attributes:
        method: the method called (``set_twist``, ``set_pose``, ...).
        argument: the argument's name as the method's signature has it (``vx``, ``pose[2]``, ``torques[1]``).
        expected: what it must be (``a real number (int or float)``).
        given: what it was, as the message shows it: its type and a short repr (``NoneType None``).
        owner: who refused it, as the message starts (``vehicle 'bot1'``, ``controller "raw"``), or "".

    Args:
        shown: ``given`` as already shown (for unpickling); None: made from ``given``.
    """

    def __init__(self, method: str, argument: str, expected: str, given: object, owner: str = "",
                 shown: str | None = None) -> None:
        self.method = method
        self.argument = argument
        self.expected = expected
        self.given = _shown(given) if shown is None else shown
        self.owner = owner
        head = f"{owner}: " if owner else ""
        super().__init__(f"{head}{method}(): {argument} must be {expected}, got {self.given}; refused, nothing "
                         f"changed")

    def __reduce__(self):  # ``given`` is kept as shown (the value itself may not pickle)
        return (type(self), (self.method, self.argument, self.expected, None, self.owner, self.given))


class ArgumentValueError(MvsimError, ValueError):
    """A public API call got an argument of the right type whose value is refused, where no command or state rule
    applies (a negative seed or duration, a pose of the wrong length, a malformed random state): nothing changes.

    Attributes:
        method: the method called.
        argument: the argument's name (``seconds``, ``pose``, ``seed``).
        expected: what is wrong and what it must be (``an integer >= 0, not -3``).
        owner: who refused it, or "".
    """

    def __init__(self, method: str, argument: str, expected: str, owner: str = "") -> None:
        self.method = method
        self.argument = argument
        self.expected = expected
        self.owner = owner
        head = f"{owner}: " if owner else ""
        super().__init__(f"{head}{method}(): {argument} must be {expected}; refused, nothing changed")

    def __reduce__(self):
        return (type(self), (self.method, self.argument, self.expected, self.owner))
