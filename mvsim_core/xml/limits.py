"""Limits on what reading one world file may expand into, and the budget that enforces them.

A world file is a small program: ``<for>`` loops, ``<include>``\\ s, ``<variable>`` chains and ``$f{}`` values can make
a few lines expand into more work or memory than any machine has. Every load (a world file, or one spawn request)
gets a :class:`LoadBudget` for the :class:`LoadLimits` in force; going over one stops the load with a
:class:`~mvsim_core.errors.WorldFileError` at the offending tag that names the limit and how to raise it.

=============================  ===============  ====================================================================
limit (environment variable)   default          what it bounds
=============================  ===============  ====================================================================
``MVSIM_MAX_LOOP_ITERATIONS``  100 000          ``<for>`` iterations in one load, all loops together (nesting
                                                multiplies: the inner loop's iterations count each time it runs)
``MVSIM_MAX_VALUE_LENGTH``     1 000 000        characters of any value after substitution (attribute, text,
                                                ``<variable>``), also within one substitution pass
``MVSIM_MAX_SUBSTITUTED``      100 000 000      characters all value substitutions of one load produce together
                                                (time and memory: a loop re-expanding a long value)
``MVSIM_MAX_INCLUDE_DEPTH``    32               ``<include>`` nesting (a file including a file including ...)
``MVSIM_MAX_INCLUDED_FILES``   10 000           ``<include>``\\ s read in one load (a class body read per instance
                                                reads its includes again)
``MVSIM_MAX_INCLUDED_BYTES``   16 MiB           characters of included text after text substitution, all included
                                                files of one load together
``MVSIM_MAX_NESTING_DEPTH``    1000             elements nested inside each other in one file
``MVSIM_MAX_OBJECTS``          1000             vehicles, blocks (wall segments too), actors, world elements,
                                                sensors, markers and joints one load builds (a 100 000-iteration
                                                ``<for>`` of vehicles would take minutes to build and step)
=============================  ===============  ====================================================================

The defaults leave every shipped and upstream world far inside (the largest loops 25 iterations, includes 3 deep).
Raise one with its environment variable (read from the ``env`` that ``load_world`` is given, ``os.environ`` by
default) or with ``load_world(..., limits=LoadLimits(loop_iterations=...))``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from mvsim_core.errors import WorldFileError

__all__ = ["LoadBudget", "LoadLimits", "ENV_NAMES"]

ENV_NAMES: dict[str, str] = {
    "loop_iterations": "MVSIM_MAX_LOOP_ITERATIONS",
    "value_length": "MVSIM_MAX_VALUE_LENGTH",
    "substituted": "MVSIM_MAX_SUBSTITUTED",
    "include_depth": "MVSIM_MAX_INCLUDE_DEPTH",
    "included_files": "MVSIM_MAX_INCLUDED_FILES",
    "included_bytes": "MVSIM_MAX_INCLUDED_BYTES",
    "nesting_depth": "MVSIM_MAX_NESTING_DEPTH",
    "objects": "MVSIM_MAX_OBJECTS",
}
"""Field of :class:`LoadLimits` -> the environment variable that sets it."""


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
    """

    loop_iterations: int = 100_000
    value_length: int = 1_000_000
    substituted: int = 100_000_000
    include_depth: int = 32
    included_files: int = 10_000
    included_bytes: int = 16 << 20
    nesting_depth: int = 1000
    objects: int = 1000

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"LoadLimits.{f.name} must be a positive integer, got {v!r}")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> LoadLimits:
        """The defaults, with each limit whose environment variable is set in ``env`` replaced by its value.

        Raises:
            WorldFileError: a variable is set but is not a positive integer (no file or line: the message names
                the variable).
        """
        values: dict[str, int] = {}
        for name, var in ENV_NAMES.items():
            raw = env.get(var)
            if raw is None or not raw.strip():
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


class LoadBudget:
    """What one load has used of its :class:`LoadLimits`; each ``charge_*`` raises once a limit is passed.

    Args:
        limits: the limits in force.
    """

    __slots__ = ("limits", "loop_iterations", "included_files", "included_bytes", "substituted", "objects")

    def __init__(self, limits: LoadLimits | None = None) -> None:
        self.limits = limits or LoadLimits()
        self.loop_iterations = 0
        self.included_files = 0
        self.included_bytes = 0
        self.substituted = 0
        self.objects = 0

    def charge_objects(self, count: int, what: str, file: str, line: int) -> None:
        """Count ``count`` objects (``what``: "a vehicle and its 2 sensors", ...) built from the tag at
        ``file:line``."""
        total = self.objects + count
        if total > self.limits.objects:
            raise WorldFileError(file, line, self.limits.message(
                "objects", f"{what} would bring this load to {total} objects", "objects per load"))
        self.objects = total

    def charge_substituted(self, size: int, file: str, line: int) -> None:
        """Count a value of ``size`` characters that substitution produced (read at ``file:line``)."""
        total = self.substituted + size
        if total > self.limits.substituted:
            raise WorldFileError(file, line, self.limits.message(
                "substituted", f"substituted values reach {total} characters in this load",
                "characters substituted per load"))
        self.substituted = total

    def charge_loop(self, iterations: int, elements: int, file: str, line: int) -> None:
        """Count a ``<for>`` (at ``file:line``) about to run ``iterations`` times over a body of ``elements``
        elements: it costs ``iterations * max(elements, 1)``, what it makes the walker visit."""
        n = max(iterations, 0)
        cost = n * max(elements, 1)
        if self.loop_iterations + cost > self.limits.loop_iterations:
            what = f"<for> runs {n} iterations" + (f" of {elements} elements ({cost} in all)" if elements > 1 else "")
            if self.loop_iterations:
                what += f" after {self.loop_iterations} in this load"
            raise WorldFileError(file, line, self.limits.message("loop_iterations", what, "loop iterations per load"))
        self.loop_iterations += cost

    def charge_include(self, file: str, line: int) -> None:
        """Count one ``<include>`` (at ``file:line``) about to be read."""
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
        if size > self.bytes_left():
            raise WorldFileError(file, line, self.included_bytes_message(size))
        self.included_bytes += size

    def included_bytes_message(self, size: int) -> str:
        before = f" after {self.included_bytes} in this load" if self.included_bytes else ""
        return self.limits.message("included_bytes", f"included text of {size} characters{before}",
                                   "characters of included text per load")
