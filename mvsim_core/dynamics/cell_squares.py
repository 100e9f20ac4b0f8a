"""Square static Box2D fixtures on a lattice of cells, shared by the moving bodies that need them.

Occupancy-grid obstacles (:mod:`.grid_obstacles`) and terrain steps (:mod:`.terrain_obstacles`) both keep, per moving
body, the set of cells near it, and one square fixture per cell in the union of those sets. A cell's fixture is made
when the first body needs it and destroyed when the last one leaves it: a reference count per cell.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def swap_cell_squares(body: Any, fixtures: dict[int, Any], refcount: dict[int, int], old: set[int], new: set[int],
                      half: float, center: Callable[[int], tuple[float, float]], friction: float,
                      restitution: float) -> None:
    """One moving body's cells went from ``old`` to ``new``: update ``refcount`` and the square fixtures.

    Args:
        body: the static Box2D body holding the squares (world frame).
        fixtures: cell key -> its square fixture (updated in place).
        refcount: cell key -> number of moving bodies that need it (updated in place).
        old, new: the body's cell keys before and now.
        half: half side of a square (m).
        center: cell key -> world (x, y) of its centre (m).
        friction, restitution: of new squares.
    """
    for c in old - new:
        left = refcount[c] - 1
        if left:
            refcount[c] = left
        else:
            del refcount[c]
            body.DestroyFixture(fixtures.pop(c))
    for c in new - old:
        if c in refcount:
            refcount[c] += 1
            continue
        refcount[c] = 1
        cx, cy = center(c)
        fixtures[c] = body.CreatePolygonFixture(box=(half, half, (cx, cy), 0.0), friction=friction,
                                                restitution=restitution)
