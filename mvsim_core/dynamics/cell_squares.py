"""Square static Box2D fixtures on a lattice of cells, shared by the moving bodies that need them.

Occupancy-grid obstacles (:mod:`.grid_obstacles`) and terrain steps (:mod:`.terrain_obstacles`) both keep, per moving
body, the set of cells near it, and one square fixture per cell in the union of those sets. A cell's fixture is made
when the first body needs it and destroyed when the last one leaves it: a reference count per cell.

Squares are made and destroyed in ascending cell order, not in the order the sets happen to iterate (which depends
on how each set was built): the order of Box2D's fixture list and broad-phase ids follows from it, and with it the
order in which contacts are found, so a run that goes on from a snapshot (whose sets are rebuilt) makes them in the
same order as the run that was captured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import Box2D


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
    for c in sorted(old - new):
        left = refcount[c] - 1
        if left:
            refcount[c] = left
        else:
            del refcount[c]
            body.DestroyFixture(fixtures.pop(c))
    for c in sorted(new - old):
        if c in refcount:
            refcount[c] += 1
            continue
        refcount[c] = 1
        fixtures[c] = _square(body, c, half, center, friction, restitution)


def restore_cell_squares(body: Any, fixtures: dict[int, Any], cells: Sequence[int], half: float,
                         center: Callable[[int], tuple[float, float]], friction: float, restitution: float) -> None:
    """Make ``fixtures`` hold a square for exactly ``cells``, in that order (a snapshot being restored): squares of
    other cells are destroyed, missing ones made (as :func:`swap_cell_squares` makes them), the others kept. The
    order of the squares in Box2D's fixture list is set afterwards by :mod:`.box2d_state`."""
    if len(fixtures) == len(cells) and list(fixtures) == list(cells):
        return
    wanted = set(cells)
    for c in [c for c in fixtures if c not in wanted]:
        body.DestroyFixture(fixtures.pop(c))
    made = {c: fixtures.get(c) or _square(body, c, half, center, friction, restitution) for c in cells}
    fixtures.clear()
    fixtures.update(made)


_SHAPE = Box2D.b2PolygonShape()
_DEF = Box2D.b2FixtureDef(shape=_SHAPE)
"""The polygon shape and fixture definition every square is made from (Box2D copies the shape into the fixture)."""


def _square(body: Any, cell: int, half: float, center: Callable[[int], tuple[float, float]], friction: float,
            restitution: float) -> Any:
    """A new axis-aligned square fixture of half side ``half`` (m) centred on ``cell``: the fixture
    ``CreatePolygonFixture(box=...)`` would make, from the reused :data:`_SHAPE` and :data:`_DEF` in a quarter of the
    time (2.7 against 11.5 µs; a world start can make a thousand of them)."""
    cx, cy = center(cell)
    _SHAPE.SetAsBox(half, half, (cx, cy), 0.0)
    _DEF.shape = _SHAPE
    _DEF.friction = friction
    _DEF.restitution = restitution
    return body.CreateFixture(_DEF)
