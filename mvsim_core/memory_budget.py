"""The memory budget of arrays whose size a world file decides.

A few numbers in a world file size an array: a grid's extent over its resolution, an image's width times height, a
count of rays or segments. A typo (``1e9`` for ``10``) must not ask the machine for hundreds of GiB at the first step:
every such array is checked at load against :data:`ARRAY_BUDGET_BYTES`, and a larger one is a
:class:`~mvsim_core.errors.WorldFileError` at the tag that sized it, naming the size, the budget and what to change
(:func:`budget_message`).
"""

from __future__ import annotations

import math

ARRAY_BUDGET_BYTES = 256 * 2**20
"""Largest array (bytes) that one value of a world file may make the simulator allocate: 256 MiB, room for a
8192 x 4096 float64 map. The largest array of the shipped and upstream worlds is below 4 MiB."""


def array_bytes(count: float, item_bytes: int = 8) -> float:
    """Bytes of an array of ``count`` items of ``item_bytes`` each (a float: ``count`` may be huge or inf)."""
    return float(count) * item_bytes


def over_budget(count: float, item_bytes: int = 8) -> bool:
    """Whether ``count`` items of ``item_bytes`` bytes exceed :data:`ARRAY_BUDGET_BYTES` (NaN counts as over)."""
    return not array_bytes(count, item_bytes) <= ARRAY_BUDGET_BYTES


def format_bytes(n: float) -> str:
    """``n`` bytes as text: ``"3.2 GiB"``, ``"512 MiB"``, ``"1e+12 TiB"``."""
    if not math.isfinite(n):
        return "an unbounded amount of memory"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def budget_message(what: str, count: float, item_bytes: int, fix: str) -> str:
    """The error text for an array over budget.

    Args:
        what: what the array holds, with its dimensions (``"occupancy grid of 200000 x 200000 cells"``).
        count: number of items.
        item_bytes: bytes per item.
        fix: how to change the file (``"use a coarser <resolution>"``).
    """
    return (f"{what} needs {format_bytes(array_bytes(count, item_bytes))}, more than the "
            f"{format_bytes(ARRAY_BUDGET_BYTES)} budget for one array sized by a world file; {fix}")
