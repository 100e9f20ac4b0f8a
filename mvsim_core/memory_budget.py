"""Memory budgets: of one array whose size a world file decides, and of everything one load builds.

A few numbers in a world file size an array: a grid's extent over its resolution, an image's width times height, a
count of rays or segments. A typo (``1e9`` for ``10``) must not ask the machine for hundreds of GiB at the first step:
every such array is checked at load against :data:`ARRAY_BUDGET_BYTES`, and a larger one is a
:class:`~mvsim_core.errors.WorldFileError` at the tag that sized it, naming the size, the budget and what to change
(:func:`budget_message`).

Many objects add up too: every object a load builds is charged its estimated memory, running (its Python objects,
its Box2D body, its arrays once started), against one budget per load, :data:`LOAD_BUDGET_BYTES` by default
(``MVSIM_MAX_LOAD_MEMORY``; :class:`~mvsim_core.xml.limits.LoadBudget`). The costs below are rounded up from the
memory this implementation was measured to take per object (growth of the resident set of a process loading,
starting and running 0.1 s of 1000 of them, after a warm-up; ``benchmarks/bench_fleet.py`` for the fleet):

==================================  =========================================  ====================================
object                              estimate                                   measured
==================================  =========================================  ====================================
vehicle                             32 KiB + 8 KiB per wheel                   41 KiB (small_robot, 2 wheels)
sensor                              16 KiB + its arrays: per ray (2D lidar     2D lidar: 16 KiB at 10 rays, 45 KiB
                                    192 B, 3D lidar 128 B) or per pixel        at 181, 653 KiB at 4000 (160 B/ray)
                                    (24 B per image)
block, wall segment                 8 KiB + 64 B per vertex                    7-9 KiB (triangle, static or not)
world element                       8 KiB                                      4 KiB (horizontal_plane)
actor                               16 KiB                                     (as a vehicle without wheels)
marker                              4 KiB + 48 B per point                     (set by analogy)
joint                               4 KiB                                      (set by analogy)
occupancy grid, per cell, once      4 B (float32 occupancy)                    4 B (the decoded array)
per shared grid
occupancy grid, per cell, per       1 B (bool collision mask)                  1 B (the mask array)
element
elevation map, per height, once     136 B: height 8, 3D caster 56 (min-max     8 + 21.3 + 29.3 + 72.0 = 130.6 B
per shared grid                     pyramid, its packed copy), mesh 72         (1000 x 1000 heights, tracemalloc)
                                    (positions, normals, colours, indices,
                                    texture coordinates)
elevation map, per height, once     128 B: packed vertices and indices 64,     64 B packed; the GL driver's
per distinct corner                 the GL driver's buffer copy 64             buffers as much again
==================================  =========================================  ====================================

An elevation map's grid is charged from its image's header before it is decoded (after decoding for a matrix or a
DEM); copies of one unchanged source with the same parameters share one read-only grid, charged once; the terrain
physics reads that grid and derives nothing per height. Peaks while preparing (about 2x the kept bytes) pass.

A small differential robot with a 181-ray 2D lidar is charged 98 KiB (86 KiB measured): 10 000 of them are about
0.93 GiB, a quarter of the default budget.
"""

from __future__ import annotations

import math

ARRAY_BUDGET_BYTES = 256 * 2**20
"""Largest array (bytes) that one value of a world file may make the simulator allocate: 256 MiB, room for a
8192 x 4096 float64 map. The largest array of the shipped and upstream worlds is below 4 MiB."""


LOAD_BUDGET_BYTES = 4 * 2**30
"""Default estimated memory (bytes) of all one load builds: 4 GiB. Fixed, not a share of the machine's memory, so
that a world that loads (or that ``mvsim check`` passes) on one machine loads on every other; 10 000 lidar robots
(0.93 GiB) fit 4 times over, while the bombs the limits exist for (a loop of 100 000 robots, nested loops of 2^40)
ask for far more and are refused at their ``<for>`` before they are built."""

KIB = 2**10
VEHICLE_BYTES = 32 * KIB
"""A vehicle's chassis, dynamics, controller, friction model and Box2D body, without wheels or sensors."""
WHEEL_BYTES = 8 * KIB
SENSOR_BYTES = 16 * KIB
"""A sensor without its per-ray or per-pixel arrays."""
BLOCK_BYTES = 8 * KIB
"""A block or wall segment without its vertices."""
VERTEX_BYTES = 64
ELEMENT_BYTES = 8 * KIB
"""A world element without the arrays it allocates (images, grids: each within :data:`ARRAY_BUDGET_BYTES`)."""
ACTOR_BYTES = 16 * KIB
MARKER_BYTES = 4 * KIB
MARKER_POINT_BYTES = 48
JOINT_BYTES = 4 * KIB
HEIGHT_BYTES = 8
"""One decoded elevation-map height (float64)."""
ELEVATION_CELL_BYTES = HEIGHT_BYTES + 56 + 72
"""Per height of an elevation map, charged once per shared height grid: the height (8 B), the 3D ray caster's
min-max pyramid and its packed copy (56 B) and the renderer's mesh (72 B); see the table above."""
ELEVATION_PLACEMENT_CELL_BYTES = 128
"""Per height of an elevation map, charged once per distinct place (corner) the grid is drawn at: the renderer's
packed vertices and indices and the GL driver's copy of them."""


def vehicle_bytes(wheels: int) -> int:
    """Estimated memory of a vehicle with ``wheels`` wheels, without its sensors."""
    return VEHICLE_BYTES + wheels * WHEEL_BYTES


def sensor_bytes(arrays: int) -> int:
    """Estimated memory of a sensor whose per-ray or per-pixel arrays take ``arrays`` bytes."""
    return SENSOR_BYTES + arrays


def block_bytes(vertices: int) -> int:
    """Estimated memory of a block (or wall segment) whose footprint has ``vertices`` vertices."""
    return BLOCK_BYTES + vertices * VERTEX_BYTES


def marker_bytes(points: int) -> int:
    """Estimated memory of a marker of ``points`` points."""
    return MARKER_BYTES + points * MARKER_POINT_BYTES


def array_bytes(count: float, item_bytes: int = 8) -> float:
    """Bytes of an array of ``count`` items of ``item_bytes`` each (a float: ``count`` may be huge or inf)."""
    return float(count) * item_bytes


def over_budget(count: float, item_bytes: int = 8) -> bool:
    """Whether ``count`` items of ``item_bytes`` bytes exceed :data:`ARRAY_BUDGET_BYTES` (NaN counts as over)."""
    return not array_bytes(count, item_bytes) <= ARRAY_BUDGET_BYTES


def format_bytes(n: float) -> str:
    """``n`` bytes as text: ``"3.2 GiB"``, ``"512 MiB"``, ``"95.5 PiB"``, ``"1e+12 EiB"``."""
    if not math.isfinite(n):
        return "an unbounded amount of memory"
    for unit, size in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20),
                       ("KiB", 2**10)):
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
