"""Box2D fixtures of vehicles and blocks: a footprint polygon as convex pieces, a wheel as a box.

Shared by :class:`~mvsim_core.dynamics.bodies.Bodies` (the running world) and :mod:`.body_check` (the same fixtures
on a scratch ``b2World`` while a world file is read). Box2D and numpy only: cheap to import at load.

Frames and units: body frame (the object's reference point), metres, radians, kilograms.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.dynamics.convex_pieces import convex_pieces
from mvsim_core.geometry.polygons import signed_area

if TYPE_CHECKING:
    from mvsim_core.objects.wheel import Wheel

log = logging.getLogger("mvsim_core.dynamics")

WHEEL_FRICTION, WHEEL_RESTITUTION = 0.5, 0.05

VEHICLE_CATEGORY = 0x0002
"""Box2D collision category of every vehicle fixture (chassis and wheels); the other fixtures keep Box2D's default
category 0x0001."""

NOT_VEHICLES = 0xFFFF & ~VEHICLE_CATEGORY
"""Collision mask of the fixtures vehicles pass through: drivable ramps and bumps (their top is the vehicles'
ground, :mod:`mvsim_core.dynamics.terrain`), which other bodies still meet."""


def add_polygon(body: Any, poly: np.ndarray, *, mass: float | None, friction: float, restitution: float,
                user_data: str | None = None, rejected: list[str] | None = None, category: int = 0x0001,
                mask: int = 0xFFFF) -> list[Any]:
    """Fixtures for ``poly`` (body frame, m) on ``body``; ``mass`` (kg) spread over their area, None = static;
    ``category`` / ``mask``: Box2D collision filter bits (:data:`VEHICLE_CATEGORY`, :data:`NOT_VEHICLES`).

    A piece that Box2D refuses (a sliver of negligible area) is skipped; ``rejected``, when given, receives Box2D's
    reason for each (:mod:`.body_check` reads them at load)."""
    pieces = convex_pieces(poly)
    total = sum(signed_area(q) for q in pieces)
    density = 0.0 if mass is None else float(mass) / total
    out = []
    for q in pieces:
        try:
            f = body.CreatePolygonFixture(vertices=[(float(a), float(b)) for a, b in q], density=density,
                                          friction=float(friction), restitution=float(restitution),
                                          categoryBits=category, maskBits=mask)
        except AssertionError as e:  # Box2D rejects a sliver; its area is negligible
            log.debug("Box2D rejected a polygon piece %s", q.tolist())
            if rejected is not None:
                rejected.append(str(e))
            continue
        f.userData = user_data
        out.append(f)
    return out


def wheel_fixture(body: Any, w: Wheel, yaw: float) -> Any:
    """The ``diameter`` x ``width`` box of wheel ``w`` at its position, turned by ``yaw`` (rad), density
    ``mass / (diameter * width)``, on ``body``."""
    f = body.CreatePolygonFixture(box=(0.5 * w.diameter, 0.5 * w.width, (float(w.x), float(w.y)), yaw),
                                  density=float(w.mass) / (w.diameter * w.width), friction=WHEEL_FRICTION,
                                  restitution=WHEEL_RESTITUTION, categoryBits=VEHICLE_CATEGORY)
    f.userData = w.name
    return f


def body_radius(footprint: np.ndarray, wheels: Sequence[Wheel] = ()) -> float:
    """Largest distance (m) from a body's origin of a vertex of its footprint (P×2, body frame) or of its wheels'
    boxes at their mounting yaws: the ``max_radius`` of :class:`~mvsim_core.dynamics.bodies.Bodies`."""
    fp = np.asarray(footprint, dtype=np.float64).reshape(-1, 2)
    r = [float(np.hypot(fp[:, 0], fp[:, 1]).max())] if len(fp) else [0.0]
    for w in wheels:
        corners = wheel_box(w, w.yaw)
        r.append(float(np.hypot(corners[:, 0], corners[:, 1]).max()))
    return max(r)


def wheel_box(w: Wheel, yaw: float) -> np.ndarray:
    """Corners (4×2, vehicle frame, m) of a wheel's box turned by ``yaw``."""
    hx, hy = 0.5 * w.diameter, 0.5 * w.width
    c, s = math.cos(yaw), math.sin(yaw)
    loc = np.array([[-hx, -hy], [hx, -hy], [hx, hy], [-hx, hy]])
    return loc @ np.array([[c, s], [-s, c]]) + (w.x, w.y)
