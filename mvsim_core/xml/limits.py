"""Limits on what reading one world file may expand into, and the budget that enforces them.

A world file is a small program: ``<for>`` loops, ``<include>``\\ s, ``<variable>`` chains and ``$f{}`` values can make
a few lines expand into more work or memory than any machine has. Every load (a world file, or one spawn request)
gets a :class:`LoadBudget` for the :class:`LoadLimits` in force; going over one stops the load with a
:class:`~mvsim_core.errors.WorldFileError` at the offending tag that names the limit and how to raise it.

=============================  ===============  ====================================================================
limit (environment variable)   default          what it bounds
=============================  ===============  ====================================================================
``MVSIM_MAX_LOAD_MEMORY``      4 GiB            estimated memory of what one load builds, running: every object
                                                charged its cost (:mod:`mvsim_core.memory_budget`: a vehicle and
                                                its wheels, a sensor and its per-ray or per-pixel arrays, a block
                                                and its vertices, ...); a size such as ``8GiB`` or a number of bytes
``MVSIM_MAX_OBJECTS``          50 000           vehicles, blocks (wall segments too), actors, world elements,
                                                sensors, markers and joints one load builds: the time net (about
                                                1-4 ms each to load and start: a minute or two at the limit)
``MVSIM_MAX_LOOP_ITERATIONS``  100 000          ``<for>`` iterations in one load, all loops together (nesting
                                                multiplies: the inner loop's iterations count each time it runs)
``MVSIM_MAX_VALUE_LENGTH``     1 000 000        characters of any value after substitution (attribute, text,
                                                ``<variable>``), also within one substitution pass
``MVSIM_MAX_SUBSTITUTED``      100 000 000      characters all value substitutions of one load produce together
                                                (time and memory: a loop re-expanding a long value)
``MVSIM_MAX_INCLUDE_DEPTH``    32               ``<include>`` nesting (a file including a file including ...)
``MVSIM_MAX_INCLUDED_FILES``   50 000           ``<include>``\\ s read in one load (a class body read per instance
                                                reads its includes again): 10 000 robots with 5 included sensor
                                                files each
``MVSIM_MAX_INCLUDED_BYTES``   64 MiB           characters of included text after text substitution, all included
                                                files of one load together
``MVSIM_MAX_NESTING_DEPTH``    1000             elements nested inside each other in one file
``MVSIM_MAX_LOAD_SECONDS``     120              wall-clock seconds of parsing and expansion (checked at every
                                                object, value, loop, include and array charge): the net under
                                                everything the other limits let through; a 10 000-robot fleet
                                                loads in well under a minute
=============================  ===============  ====================================================================

The limits stop bombs, not fleets: 10 000 differential robots with a 2D lidar each (about 1 GiB estimated, 20 000
objects, 10 001 included files when each robot includes its lidar) load with the defaults, with room for 4 times
that memory and 2.5 times those objects; every shipped and upstream world is far inside (the largest loops 25
iterations, includes 3 deep). The memory and object limits are checked as each object is built, and, so that a bomb
is refused before it is built rather than after minutes of building, also projected at each ``<for>``: once the
first iteration of a loop's body has run, the load is charged for all the iterations to come (of that loop and of
the loops around it) as if each cost what the first did, and a loop whose projection goes over a limit (objects,
memory, included files or text) stops at its ``<for>``. A loop whose iterations differ (an ``<if>`` on the loop
variable) is projected from its first one all the same.

Raise one with its environment variable (read from the ``env`` that ``load_world`` is given, ``os.environ`` by
default) or with ``load_world(..., limits=LoadLimits(loop_iterations=...))``.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path

from mvsim_core.errors import WorldFileError
from mvsim_core.memory_budget import LOAD_BUDGET_BYTES, format_bytes

__all__ = ["Charge", "LoadBudget", "LoadLimits", "ENV_NAMES", "parse_size"]

ENV_NAMES: dict[str, str] = {
    "loop_iterations": "MVSIM_MAX_LOOP_ITERATIONS",
    "value_length": "MVSIM_MAX_VALUE_LENGTH",
    "substituted": "MVSIM_MAX_SUBSTITUTED",
    "include_depth": "MVSIM_MAX_INCLUDE_DEPTH",
    "included_files": "MVSIM_MAX_INCLUDED_FILES",
    "included_bytes": "MVSIM_MAX_INCLUDED_BYTES",
    "nesting_depth": "MVSIM_MAX_NESTING_DEPTH",
    "objects": "MVSIM_MAX_OBJECTS",
    "memory": "MVSIM_MAX_LOAD_MEMORY",
    "seconds": "MVSIM_MAX_LOAD_SECONDS",
}
"""Field of :class:`LoadLimits` -> the environment variable that sets it."""

_SIZE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*([KMGTP]?)(?:I?B)?", re.IGNORECASE)
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50}


def parse_size(text: str) -> int | None:
    """Bytes written as ``text``: a whole number (``4294967296``, ``4_294_967_296``) or a number with a binary unit
    (``4GiB``, ``4 GB``, ``4G``, ``1.5GiB``, ``512MiB``, ``64k``: K, M, G, T and P are powers of 1024, with or without
    ``iB``/``B``); None for anything else or less than one byte."""
    m = _SIZE.fullmatch(text.strip().replace("_", ""))
    if m is None:
        return None
    value = math.floor(float(m.group(1)) * _UNITS[m.group(2).upper()])
    return value if value >= 1 else None


@dataclass(frozen=True)
class LoadLimits:
    """The expansion limits of one load (see the module docstring). All are positive integers.

    Attributes:
        loop_iterations: ``<for>`` iterations per load, all loops together.
        value_length: characters of one value after substitution.
        substituted: characters produced by all value substitutions of one load.
        include_depth: ``<include>`` nesting levels.
        included_files: ``<include>``\\ s read per load.
        included_bytes: characters of included text per load (after text substitution).
        nesting_depth: element nesting levels in one file.
        objects: vehicles, blocks, actors, elements, sensors, markers and joints built per load.
        memory: bytes of estimated memory of what one load builds (:mod:`mvsim_core.memory_budget`).
        seconds: wall-clock seconds one load may spend parsing and expanding (checked at every object, value,
            loop, include and array charge).
    """

    loop_iterations: int = 100_000
    value_length: int = 1_000_000
    substituted: int = 100_000_000
    include_depth: int = 32
    included_files: int = 50_000
    included_bytes: int = 64 << 20
    nesting_depth: int = 1000
    objects: int = 50_000
    memory: int = LOAD_BUDGET_BYTES
    seconds: int = 120

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"LoadLimits.{f.name} must be a positive integer, got {v!r}")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> LoadLimits:
        """The defaults, with each limit whose environment variable is set in ``env`` replaced by its value
        (``MVSIM_MAX_LOAD_MEMORY`` is a size: :func:`parse_size`).

        Raises:
            WorldFileError: a variable is set but is not a positive integer (or size) (no file or line: the
                message names the variable).
        """
        values: dict[str, int] = {}
        for name, var in ENV_NAMES.items():
            raw = env.get(var)
            if raw is None or not raw.strip():
                continue
            if name == "memory":
                size = parse_size(raw)
                if size is None:
                    raise WorldFileError("", 0, f"environment variable {var}={raw[:40]!r} is not a size; unset it "
                                                f"or give a number of bytes or a size such as 8GiB")
                values[name] = size
                continue
            try:
                v = int(raw.strip().replace("_", ""), 10)
            except ValueError:
                v = 0
            if v < 1:
                raise WorldFileError("", 0, f"environment variable {var}={raw[:40]!r} is not a positive integer; "
                                            f"unset it or give a whole number of at least 1")
            values[name] = v
        return cls(**values)

    def message(self, name: str, detail: str, unit: str) -> str:
        """``detail`` followed by the limit ``name`` and how to raise it."""
        return (f"{detail}: more than the limit of {getattr(self, name)} {unit}; set the environment variable "
                f"{ENV_NAMES[name]} to raise it")

    def memory_message(self, detail: str, biggest: str) -> str:
        """``detail`` followed by the memory budget, ``biggest`` (what the load has built that costs most) and how
        to raise the budget."""
        return (f"{detail}: more than the load budget of {format_bytes(self.memory)} (biggest so far: {biggest}); "
                f"set the environment variable {ENV_NAMES['memory']} to raise it")


@dataclass(frozen=True)
class Charge:
    """One thing a load builds, charged to its :class:`LoadBudget` (:meth:`LoadBudget.charge`).

    Attributes:
        kind: what it is, a singular noun that takes an ``s`` (``"small_robot vehicle"``, ``"laser sensor"``);
            charges of the same kind are summed in the list of biggest contributors that a memory error gives.
        nbytes: its estimated memory (bytes; :mod:`mvsim_core.memory_budget`).
        file: the file of the tag that made it (the first of a kind is named in that list).
        line: the line of that tag.
        objects: how many objects it counts as (``MVSIM_MAX_OBJECTS``): 1 for an object, 0 for memory of an object
            already counted (an array it allocates).
    """

    kind: str
    nbytes: int
    file: str
    line: int
    objects: int = 1


@dataclass
class _Loop:
    """A ``<for>`` being expanded: its iterations, and whether the visit now running is the first of its current
    body element (only then does a projection measure one iteration)."""

    iterations: int
    file: str
    line: int
    first: bool = True


_PROJECTED = ("memory", "objects", "included_files", "included_bytes")


class LoadBudget:
    """What one load has used of its :class:`LoadLimits`; each ``charge_*`` raises once a limit is passed.

    Args:
        limits: the limits in force.
    """

    __slots__ = ("limits", "loop_iterations", "included_files", "included_bytes", "substituted", "objects",
                 "memory", "_biggest", "_loops", "_last_loop", "_shared", "_clock", "_deadline")

    def __init__(self, limits: LoadLimits | None = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        """``clock``: seconds of a monotonic clock (the time limit's; :func:`time.monotonic`)."""
        self.limits = limits or LoadLimits()
        self._clock = clock
        self._deadline = clock() + self.limits.seconds
        self._shared: set[Hashable] = set()
        self.loop_iterations = 0
        self.included_files = 0
        self.included_bytes = 0
        self.substituted = 0
        self.objects = 0
        self.memory = 0
        self._biggest: dict[str, tuple[int, int, str, int]] = {}  # kind -> (count, bytes, first file, first line)
        self._loops: list[_Loop] = []
        self._last_loop = 0

    # ------------------------------------------------------------------ objects and memory
    def charge(self, what: str, charges: Iterable[Charge], file: str, line: int) -> None:
        """Charge what one tag built (``what``: "vehicle 'r1' and its 2 sensors") at ``file:line``.

        Raises:
            WorldFileError: at ``file:line``, when the memory or the objects of this load go over their limit.
        """
        self.check_time(file, line)
        items = list(charges)
        count = sum(c.objects for c in items)
        nbytes = sum(c.nbytes for c in items)
        for c in items:
            n, b, f, ln = self._biggest.get(c.kind, (0, 0, c.file, c.line))
            self._biggest[c.kind] = (n + 1, b + c.nbytes, f, ln)
        self.memory += nbytes
        self.objects += count
        if self.memory > self.limits.memory:
            raise WorldFileError(file, line, self.limits.memory_message(
                f"{what} would bring this load to an estimated {format_bytes(self.memory)} of memory",
                self.biggest()))
        if self.objects > self.limits.objects:
            raise WorldFileError(file, line, self.limits.message(
                "objects", f"{what} would bring this load to {self.objects} objects", "objects per load"))

    def charge_once(self, key: Hashable, what: str, charges: Iterable[Charge], file: str, line: int) -> bool:
        """:meth:`charge` what is built once and shared by every element that asks for the same ``key`` (a decoded
        map file): charged the first time only. Returns whether it was charged now."""
        if key in self._shared:
            self.check_time(file, line)
            return False
        self.charge(what, charges, file, line)
        self._shared.add(key)
        return True

    def check_time(self, file: str, line: int) -> None:
        """Raise once this load has run longer than ``MVSIM_MAX_LOAD_SECONDS``.

        Raises:
            WorldFileError: at ``file:line`` (where the load was when it noticed), naming the limit.
        """
        if self._clock() > self._deadline:
            raise WorldFileError(file, line, self.limits.message(
                "seconds", "reading this world takes too long (still parsing and expanding it here)",
                "seconds of parsing and expansion per load"))

    def biggest(self, n: int = 3) -> str:
        """The ``n`` kinds of things that cost most so far, with where the first of each was built:
        ``"10000 laser sensors (488 MiB, the first at lidar2d.sensor.xml:1), ..."``."""
        top = sorted(self._biggest.items(), key=lambda kv: (-kv[1][1], kv[0]))[:n]
        if not top:
            return "nothing"
        return ", ".join(f"{count} {kind}{'s' if count > 1 else ''} ({format_bytes(nbytes)}, "
                         f"{'the first ' if count > 1 else ''}at {Path(file).name}:{line})"
                         for kind, (count, nbytes, file, line) in top)

    # ------------------------------------------------------------------ loops: projection
    def enter_loop(self, file: str, line: int) -> _Loop:
        """A ``<for>`` (at ``file:line``) starts its iterations: the last :meth:`charge_loop` counted them."""
        loop = _Loop(self._last_loop, file, line)
        self._loops.append(loop)
        return loop

    def exit_loop(self) -> None:
        """The innermost ``<for>`` ended (or was abandoned by an error)."""
        self._loops.pop()

    def snapshot(self) -> tuple[int, ...] | None:
        """The counters before a visit that :meth:`project` should measure: when every loop being expanded is on
        the first visit of its current body element (the first iteration of the nest), else None."""
        if not self._loops or not all(loop.first for loop in self._loops):
            return None
        return tuple(getattr(self, name) for name in _PROJECTED)

    def project(self, before: tuple[int, ...]) -> None:
        """After the first visit measured from ``before`` (:meth:`snapshot`): charge, as an estimate, what the
        iterations still to come of the loops being expanded would add at the same cost, and refuse at the
        innermost ``<for>`` when that goes over a limit. Nothing is kept: the iterations are charged as they run.

        Raises:
            WorldFileError: at the innermost ``<for>``, naming the limit.
        """
        loop = self._loops[-1]
        repeats = math.prod(f.iterations for f in self._loops)
        where = f"{repeats} iterations" + (" counting the loops around it" if len(self._loops) > 1 else "")
        lim = self.limits
        for name, was in zip(_PROJECTED, before, strict=True):
            now = getattr(self, name)
            step = now - was
            total = now + step * (repeats - 1)
            if step <= 0 or total <= getattr(lim, name):
                continue
            if name == "memory":
                msg = lim.memory_message(f"<for> would bring this load to an estimated {format_bytes(total)} of "
                                         f"memory ({format_bytes(step)} in its first iteration, {where})",
                                         self.biggest())
            elif name == "objects":
                msg = lim.message(name, f"<for> would build about {total} objects ({step} in its first iteration, "
                                        f"{where})", "objects per load")
            elif name == "included_files":
                msg = lim.message(name, f"<for> would read about {total} included files ({step} in its first "
                                        f"iteration, {where})", "included files per load")
            else:
                msg = lim.message(name, f"<for> would include about {total} characters of text ({step} in its "
                                        f"first iteration, {where})", "characters of included text per load")
            raise WorldFileError(loop.file, loop.line, msg)

    # ------------------------------------------------------------------ expansion
    def charge_substituted(self, size: int, file: str, line: int) -> None:
        """Count a value of ``size`` characters that substitution produced (read at ``file:line``)."""
        self.check_time(file, line)
        total = self.substituted + size
        if total > self.limits.substituted:
            raise WorldFileError(file, line, self.limits.message(
                "substituted", f"substituted values reach {total} characters in this load",
                "characters substituted per load"))
        self.substituted = total

    def charge_loop(self, iterations: int, elements: int, file: str, line: int) -> None:
        """Count a ``<for>`` (at ``file:line``) about to run ``iterations`` times over a body of ``elements``
        elements: it costs ``iterations * max(elements, 1)``, what it makes the walker visit."""
        self.check_time(file, line)
        n = max(iterations, 0)
        cost = n * max(elements, 1)
        if self.loop_iterations + cost > self.limits.loop_iterations:
            what = f"<for> runs {n} iterations" + (f" of {elements} elements ({cost} in all)" if elements > 1 else "")
            if self.loop_iterations:
                what += f" after {self.loop_iterations} in this load"
            raise WorldFileError(file, line, self.limits.message("loop_iterations", what, "loop iterations per load"))
        self.loop_iterations += cost
        self._last_loop = n

    def charge_include(self, file: str, line: int) -> None:
        """Count one ``<include>`` (at ``file:line``) about to be read."""
        self.check_time(file, line)
        if self.included_files + 1 > self.limits.included_files:
            raise WorldFileError(file, line, self.limits.message(
                "included_files", f"<include> number {self.included_files + 1} in this load",
                "included files per load"))
        self.included_files += 1

    def bytes_left(self) -> int:
        """Characters of included text this load may still read."""
        return max(self.limits.included_bytes - self.included_bytes, 0)

    def charge_bytes(self, size: int, file: str, line: int) -> None:
        """Count ``size`` characters of included text (read by the ``<include>`` at ``file:line``)."""
        self.check_time(file, line)
        if size > self.bytes_left():
            raise WorldFileError(file, line, self.included_bytes_message(size))
        self.included_bytes += size

    def included_bytes_message(self, size: int) -> str:
        before = f" after {self.included_bytes} in this load" if self.included_bytes else ""
        return self.limits.message("included_bytes", f"included text of {size} characters{before}",
                                   "characters of included text per load")
