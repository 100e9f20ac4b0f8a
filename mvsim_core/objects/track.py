"""The row of the physics' keyframe tracks that drives an animated object (a block or an actor).

A block or actor with a ``<path>`` does not move by its own dynamics: :meth:`mvsim_core.dynamics.physics.Physics.
animate` moves it along its track, and the object reads its pose from its row of ``physics.anim_poses``. The
physics attaches each such object once, when it is built, through :func:`checked_track`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mvsim_core import arguments as arg
from mvsim_core.errors import ArgumentValueError

if TYPE_CHECKING:
    from mvsim_core.dynamics.physics import Physics


def checked_track(physics: Physics, k: Any, owner: str) -> tuple[Any, int]:
    """``(physics, k)`` once checked: ``physics`` a Physics and ``k`` an existing row of its ``anim_poses``
    (``owner`` names the object in the errors, e.g. ``"block 'box1'"``).

    Raises:
        ArgumentTypeError: ``physics`` is no Physics, ``k`` no integer.
        ArgumentValueError: ``k`` is no row of ``physics.anim_poses``.
    """
    from mvsim_core.dynamics.physics import Physics

    arg.instance("attach_track", "physics", physics, Physics, "a Physics", owner)
    row = arg.integer("attach_track", "k", k, minimum=0, owner=owner)
    if row >= len(physics.anim_poses):
        rows = len(physics.anim_poses)
        raise ArgumentValueError("attach_track", "k", f"a row of the physics' tracks (< {rows}), not {row}", owner)
    return physics, row
