"""One checked path for the arguments of the public Python API (World, Vehicle, controllers' verbs, sensors).

Every public entry point converts what it is given through the functions here before anything changes, so that a
caller sees only the documented errors (``README.md``, *Errors*), each naming the method and the argument:

* a wrong type (``None``, a string where a number goes, a list where a name goes, a bool where a number goes)
  raises :class:`~mvsim_core.errors.ArgumentTypeError` (also a ``TypeError``);
* an integer too large for a float (``10**400``) becomes ±inf, so that the caller's own check refuses it exactly as
  it refuses inf: :class:`~mvsim_core.errors.CommandValueError` for commands, :class:`~mvsim_core.errors.
  StateValueError` for poses, velocities and time;
* any other refused value (a negative seed, a pose of the wrong length) raises
  :class:`~mvsim_core.errors.ArgumentValueError` (also a ``ValueError``).

The functions only convert and check; none changes anything, so a refusal leaves the world as it was. They are
cheap on the common path (a ``float`` given where a float goes costs one type test): ``Vehicle.set_twist`` is called
every step by runners and the gym environment.

Numbers: ``int`` and ``float`` and their subclasses, numpy's integer and floating scalars, anything registered as
:class:`numbers.Real` (``fractions.Fraction``); never ``bool`` (``True`` is no speed), ``complex``, ``str`` or
``Decimal``.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, TypeVar

import numpy as np

from mvsim_core.errors import ArgumentTypeError, ArgumentValueError

T = TypeVar("T")

_NOT_SEQUENCES = (str, bytes, bytearray, memoryview, Mapping, set, frozenset)


def real(method: str, argument: str, value: Any, owner: str = "") -> float:
    """``value`` as a float, in whatever unit the caller documents; an integer too large for a float is ±inf, a
    NaN stays NaN (the caller's range check refuses both as the documented error).

    Raises:
        ArgumentTypeError: not a real number (``None``, ``str``, ``bool``, ``complex``, a list, ...).
    """
    t = type(value)
    if t is float:
        return value
    if t is int or (t is not bool and isinstance(value, numbers.Real)):
        try:
            return float(value)
        except OverflowError:  # an integer (or fraction) beyond ±1.8e308: as far as a float can say, infinite
            return math.inf if value > 0 else -math.inf
    raise ArgumentTypeError(method, argument, "a real number (int or float)", value, owner)


def optional_real(method: str, argument: str, value: Any, owner: str = "") -> float | None:
    """:func:`real`, or None when ``value`` is None."""
    return None if value is None else real(method, argument, value, owner)


def reals(method: str, argument: str, value: Any, length: int | None = None, owner: str = "") -> tuple[float, ...]:
    """``value`` (a list, tuple, numpy array or other iterable of numbers; not a string, mapping or set) as a tuple
    of floats, each through :func:`real` (named ``argument[i]``).

    Raises:
        ArgumentTypeError: not such an iterable, or an item that is no real number.
        ArgumentValueError: ``length`` given and the number of items is another.
    """
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise ArgumentValueError(method, argument, f"a flat sequence of numbers, not an array of shape "
                                                       f"{value.shape}", owner)
        if value.dtype.kind in "fiu":
            items: list[Any] = value.tolist()
        else:
            items = list(value)
    elif isinstance(value, _NOT_SEQUENCES) or not isinstance(value, Iterable):
        raise ArgumentTypeError(method, argument, "a sequence of numbers", value, owner)
    else:
        items = list(value)
    if length is not None and len(items) != length:
        raise ArgumentValueError(method, argument, f"{length} numbers, not {len(items)}", owner)
    return tuple(real(method, f"{argument}[{i}]", v, owner) for i, v in enumerate(items))


def finite_reals(method: str, argument: str, value: Any, length: int | None = None, owner: str = ""
                 ) -> tuple[float, ...]:
    """:func:`reals`, each finite (for queries such as ``extent(pose)``, where no domain error applies).

    Raises:
        ArgumentTypeError, ArgumentValueError: as :func:`reals`; a NaN or infinite item (ArgumentValueError).
    """
    out = reals(method, argument, value, length, owner)
    for i, v in enumerate(out):
        if not math.isfinite(v):
            raise ArgumentValueError(method, f"{argument}[{i}]", f"a finite number, not {v}", owner)
    return out


def integer(method: str, argument: str, value: Any, minimum: int | None = None, owner: str = "") -> int:
    """``value`` (``int`` or a numpy integer, not ``bool``) as an int, ``>= minimum`` when given.

    Raises:
        ArgumentTypeError: not an integer (a float too: ``1.5`` is no count or seed).
        ArgumentValueError: below ``minimum``.
    """
    if type(value) is bool or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(method, argument, "an integer", value, owner)
    out = int(value)
    if minimum is not None and out < minimum:
        raise ArgumentValueError(method, argument, f"an integer >= {minimum}, not {out}", owner)
    return out


def flag(method: str, argument: str, value: Any, owner: str = "") -> bool:
    """``value`` (``bool`` or ``numpy.bool_``) as a bool: ``None``, ``0``, ``"no"`` are not flags.

    Raises:
        ArgumentTypeError: anything else.
    """
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise ArgumentTypeError(method, argument, "True or False", value, owner)


def name(method: str, argument: str, value: Any, owner: str = "") -> str:
    """``value`` as a name (``str``).

    Raises:
        ArgumentTypeError: not a ``str``.
    """
    if isinstance(value, str):
        return value
    raise ArgumentTypeError(method, argument, "a str (a name)", value, owner)


def optional_name(method: str, argument: str, value: Any, owner: str = "") -> str | None:
    """:func:`name`, or None when ``value`` is None."""
    return None if value is None else name(method, argument, value, owner)


def optional_path(method: str, argument: str, value: Any, owner: str = "") -> str | os.PathLike[str] | None:
    """``value`` as a file path (``str`` or ``os.PathLike``), or None.

    Raises:
        ArgumentTypeError: anything else (``bytes`` paths too).
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, os.PathLike) and isinstance(os.fspath(value), str):
        return value
    raise ArgumentTypeError(method, argument, "a file path (str or pathlib.Path) or None", value, owner)


def instance(method: str, argument: str, value: Any, cls: type[T] | tuple[type, ...], expected: str,
             owner: str = "") -> T:
    """``value`` when it is an instance of ``cls`` (``expected`` says what, for the message).

    Raises:
        ArgumentTypeError: not such an instance.
    """
    if isinstance(value, cls):
        return value  # type: ignore[return-value]
    raise ArgumentTypeError(method, argument, expected, value, owner)


def hashable(method: str, argument: str, value: Any, owner: str = "") -> Hashable:
    """``value`` when it can be a set member or a dict key (a label).

    Raises:
        ArgumentTypeError: unhashable (a list, a dict, a set).
    """
    if isinstance(value, Hashable):
        try:
            hash(value)
            return value
        except TypeError:  # a tuple holding a list
            pass
    raise ArgumentTypeError(method, argument, "a hashable label (str, int, tuple, ...)", value, owner)


def function(method: str, argument: str, value: Any, owner: str = "") -> Any:
    """``value`` when it can be called.

    Raises:
        ArgumentTypeError: not callable.
    """
    if callable(value):
        return value
    raise ArgumentTypeError(method, argument, "a callable", value, owner)


def items(method: str, argument: str, value: Any, owner: str = "") -> list[Any]:
    """``value`` (any iterable but a string, bytes, mapping or set) as a list.

    Raises:
        ArgumentTypeError: not such an iterable.
    """
    if isinstance(value, _NOT_SEQUENCES) or not isinstance(value, Iterable):
        raise ArgumentTypeError(method, argument, "a list (or other iterable)", value, owner)
    return list(value)
