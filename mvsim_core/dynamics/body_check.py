"""Load-time check that an object's footprint and wheels make a Box2D body that can move (issue 14).

Box2D computes mass properties in single precision and asserts on what it cannot represent: a shape far from the
body origin compared with its own size gives a negative rotational inertia (``m_I > 0``), a box thinner than
``b2_epsilon`` (1.2e-7 m²) has no area. :class:`~mvsim_core.dynamics.bodies.Bodies` would meet these at the first
step; :func:`rigid_body_problem` builds the same fixtures, with the same code, on a scratch ``b2World`` while the world
file is read, so that the loader can name the file and line instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import Box2D
import numpy as np

from mvsim_core.dynamics.fixtures import add_polygon, wheel_fixture
from mvsim_core.geometry.polygons import signed_area

if TYPE_CHECKING:
    from mvsim_core.objects.wheel import Wheel


def rigid_body_problem(footprint: np.ndarray, mass: float | None, wheels: Sequence[Wheel] = ()) -> str | None:
    """What stops Box2D from simulating a body of this footprint and these wheels, or None when nothing does.

    Args:
        footprint: P×2 polygon (body frame, m), P >= 3; the fixtures of a vehicle's chassis or a block.
        mass: kg spread over the footprint; None for a static body (only the fixtures are checked).
        wheels: a vehicle's wheels (boxes of ``diameter`` x ``width`` at their position and mounting yaw).

    Returns:
        A phrase such as ``"its shape lies 1e+04 m from its reference point, ..."`` that completes
        ``"vehicle 'r1': "``.
    """
    fp = np.ascontiguousarray(footprint, dtype=np.float64).reshape(-1, 2)
    key = (fp.tobytes(), mass, tuple((w.name, w.x, w.y, w.yaw, w.diameter, w.width, w.mass) for w in wheels))
    if key in _RESULTS:  # objects made from one class share their shape: check it once
        return _RESULTS[key]
    if len(_RESULTS) >= _RESULTS_SIZE:
        _RESULTS.clear()
    problem = _RESULTS[key] = _problem(fp, mass, wheels)
    return problem


_RESULTS: dict[tuple[object, ...], str | None] = {}
_RESULTS_SIZE = 256


def _problem(fp: np.ndarray, mass: float | None, wheels: Sequence[Wheel]) -> str | None:
    b2world = Box2D.b2World(gravity=(0.0, 0.0), doSleep=False)
    body = (b2world.CreateStaticBody if mass is None else b2world.CreateDynamicBody)(position=(0.0, 0.0))
    rejected: list[str] = []
    if len(fp) >= 3:
        add_polygon(body, fp, mass=mass, friction=0.0, restitution=0.0, rejected=rejected)
    far = _far_shape(fp) if len(fp) >= 3 else None
    if any("m_I" in r for r in rejected) or (rejected and not body.fixtures):
        return far or (f"Box2D refuses every piece of its shape ({_extent(fp)}): it is too thin for its size in "
                       f"single precision; make it thicker or shorter")
    for w in wheels:
        try:
            wheel_fixture(body, w, float(w.yaw))
        except AssertionError:
            if _fits_at_origin(b2world, w):
                return (f"wheel <{w.name}> at ({w.x:g}, {w.y:g}) m is too far from the reference point for its size "
                        f"({w.diameter:g} x {w.width:g} m): Box2D's single-precision mass properties cannot represent "
                        f"it; put the wheels around the origin")
            return (f"wheel <{w.name}> of {w.diameter:g} x {w.width:g} m has no area for Box2D; give it a larger "
                    f"diameter and width")
    if mass is None:
        return None
    m, inertia = float(body.mass), float(body.inertia)
    if not (np.isfinite(m) and m > 0 and np.isfinite(inertia) and inertia > 0):
        return (f"Box2D gives it a mass of {m:g} kg and a rotational inertia of {inertia:g} kg·m²; check its mass, "
                f"shape and wheels")
    return None


def _fits_at_origin(b2world: Box2D.b2World, w: Wheel) -> bool:
    """Whether Box2D takes the wheel's box when centred on a body origin (then it was refused for its distance)."""
    body = b2world.CreateDynamicBody(position=(0.0, 0.0))
    try:
        body.CreatePolygonFixture(box=(0.5 * w.diameter, 0.5 * w.width), density=1.0)
    except AssertionError:
        return False
    return True


def _extent(fp: np.ndarray) -> str:
    size = fp.max(axis=0) - fp.min(axis=0)
    return f"{size[0]:.3g} x {size[1]:.3g} m, area {abs(signed_area(fp)):.3g} m²"


def _far_shape(fp: np.ndarray) -> str | None:
    """The message for a footprint farther from its origin than its own size (Box2D's mass properties, computed
    about the origin in float32, lose it), or None for one that is not."""
    size = float(np.sqrt(abs(signed_area(fp))))
    c = fp.mean(axis=0)
    dist = float(np.hypot(c[0], c[1]))
    if not dist > size:
        return None
    return (f"its shape lies {dist:.3g} m from its reference point but is only {size:.3g} m across: Box2D's "
            f"single-precision mass properties cannot represent it; put the shape's points around the origin and "
            f"place the object with <init_pose>")
