"""Measure where each part of the simulator puts an object: the box of what a ray caster or the renderer sees of it,
and the box of its Box2D bodies, to compare with ``World.extents()`` / ``mvsim check --extents``.

A *probe* casts an orthographic image: a grid of parallel rays, one per pixel centre, from a plane outside the
object. The 3D ray caster (:class:`~mvsim_core.sensors.raycast.rays3d.RaycastScene3D`), the 2D one
(:class:`~mvsim_core.sensors.raycast.scene.RaycastScene`, horizontal rays, with and without ``raytrace_3d``) and the
camera renderer (an orthographic depth image) all cast the same images. An extreme of the object — its smallest x, its
largest z, ... — is read from the hit points of a coarse image, then refined in images of finer and finer pixels
around the pixel that held it (to ~0.5 mm), so that the boxes are measured to well under the 1 cm the test allows.

Each object is measured alone: the casters and the renderer are built on a *proxy* world that holds only it (the real
object, at its real pose; vehicles read their pose from the running physics).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from mvsim_core.geometry.extent import Extent

FINEST = 1e-3
"""m: refinement stops at this pixel size."""
ZOOM = 8
"""Each refinement divides the pixel size by this."""
WINDOW = 2
"""Coarse pixels on each side of the one refined around."""
COARSE = 80
"""Pixels along the longer side of a coarse image, at most."""
FEATURE = 0.02
"""m: coarse pixels are at most this big (smaller parts may be missed by the coarse image, then by the refinement)."""
MAX_PIXELS = 40_000
"""Coarse images of big objects get bigger pixels than :data:`FEATURE` to stay within this many pixels."""


@dataclass
class View:
    """An orthographic image: ``width`` × ``height`` pixels of side ``pixel`` (m), centred on ``centre`` (a point of
    the image plane, world, m); rays along ``forward`` (unit), rows going ``down``, columns ``right`` (unit vectors;
    right × down = forward); ``reach`` (m) the farthest hit looked at."""

    centre: np.ndarray
    right: np.ndarray
    down: np.ndarray
    forward: np.ndarray
    pixel: float
    width: int
    height: int
    reach: float

    def origins(self) -> np.ndarray:
        """(height, width, 3) pixel centres on the image plane (m, world)."""
        i = (np.arange(self.width) - 0.5 * (self.width - 1)) * self.pixel
        j = (np.arange(self.height) - 0.5 * (self.height - 1)) * self.pixel
        return (self.centre + j[:, None, None] * self.down + i[None, :, None] * self.right)

    def pixel_of(self, point: np.ndarray) -> tuple[int, int]:
        """(row, col) of the pixel whose ray passes nearest to ``point`` (m, world), clipped to the image."""
        q = np.asarray(point, dtype=np.float64) - self.centre
        col = int(round(float(q @ self.right) / self.pixel + 0.5 * (self.width - 1)))
        row = int(round(float(q @ self.down) / self.pixel + 0.5 * (self.height - 1)))
        return min(max(row, 0), self.height - 1), min(max(col, 0), self.width - 1)

    def around(self, row: int, col: int) -> View:
        """A finer view of the same plane around pixel (row, col): ±:data:`WINDOW` pixels, :data:`ZOOM` times finer."""
        c = self.origins()[row, col]
        p = self.pixel / ZOOM
        n = 2 * WINDOW * ZOOM + 1
        return View(c, self.right, self.down, self.forward, p, n, n, self.reach)


Probe = Callable[[View], np.ndarray]
"""A caster: a view -> (height, width) distances along its rays from the image plane (m), inf where nothing is hit."""


# ------------------------------------------------------------------------------------------------ proxies
def proxy_world(world: Any, *, blocks: tuple[str, ...] = (), vehicles: tuple[str, ...] = (),
                actors: tuple[str, ...] = (), elements: tuple[Any, ...] = ()) -> SimpleNamespace:
    """A world-like object with only the named objects (the real ones) and ``elements``, for the casters and the
    renderer (which read ``elements``, ``blocks``, ``vehicles``, ``actors``, ``markers``, ``lights``)."""
    return SimpleNamespace(elements=list(elements), blocks={n: world.blocks[n] for n in blocks},
                           vehicles={n: world.vehicles[n] for n in vehicles},
                           actors={n: world.actors[n] for n in actors}, markers=[], lights=None, sensors={},
                           params=world.params, path=world.path, warnings=[])


def probe_3d(proxy: Any) -> Probe:
    """The 3D ray caster of ``proxy`` (the one of 3D lidars)."""
    from mvsim_core.sensors.raycast.rays3d import RaycastScene3D

    scene = RaycastScene3D(proxy, None)

    def cast(view: View) -> np.ndarray:
        o = view.origins().reshape(-1, 3)
        n = len(o)
        rot = np.broadcast_to(np.eye(3), (n, 3, 3))
        t, _ = scene.cast(o, rot, np.tile(view.forward, (n, 1)), np.arange(n + 1, dtype=np.int64),
                          np.full(n, view.reach), np.full(n, -1, dtype=np.int64))
        return t.reshape(view.height, view.width)

    return cast


def probe_2d(proxy: Any, *, raytrace_3d: bool) -> Probe:
    """The 2D ray caster of ``proxy`` (the one of 2D lidars), horizontal views only."""
    from mvsim_core.sensors.raycast.scene import RaycastScene

    scene = RaycastScene(proxy, None)

    def cast(view: View) -> np.ndarray:
        assert view.forward[2] == 0.0, "2D rays are horizontal"
        o = view.origins().reshape(-1, 3)
        n = len(o)
        dx, dy = np.full(n, float(view.forward[0])), np.full(n, float(view.forward[1]))
        t = scene.cast(o[:, :2], None, o[:, 2].copy(), np.full(n, view.reach), np.full(n, -1, dtype=np.int64),
                       np.ones(n, dtype=bool), np.full(n, raytrace_3d), directions=(dx, dy))
        return t.reshape(view.height, view.width)

    return cast


def probe_render(proxy: Any) -> Probe:
    """The cameras' renderer of ``proxy``: orthographic depth images (depth along the view, 0 = nothing drawn)."""
    from mvsim_core.sensors.render.camera_model import orthographic_matrix, view_matrix
    from mvsim_core.sensors.render.renderer import SceneRenderer
    from mvsim_core.sensors.render.scene_geometry import SceneGeometry

    renderer = SceneRenderer(SceneGeometry(proxy, None, ground_grids=False, visual_only=False))
    renderer.update_nodes()

    def cast(view: View) -> np.ndarray:
        rot = np.column_stack([view.right, view.down, view.forward])
        v = view_matrix(rot, view.centre, renderer.scene.origin)
        p = orthographic_matrix(view.width, view.height, 0.5 * view.height * view.pixel, 1e-4, view.reach,
                                zero_to_one=renderer.reversed_z)
        depth = renderer.render_matrices(v, p, view.width, view.height, rgb=False).depth
        assert depth is not None
        return np.where(depth > 0.0, depth.astype(np.float64), np.inf)

    cast.renderer = renderer  # type: ignore[attr-defined]
    return cast


# ------------------------------------------------------------------------------------------------ measuring
def side_view(box: Extent, axis: int, sign: int, margin: float, feature: float = FEATURE) -> View:
    """A coarse horizontal view of ``box`` (grown by ``margin``) from outside, looking along +``axis`` (``sign`` 1)
    or −``axis`` (−1); axis 0 = x, 1 = y."""
    lo = np.array([box.x_min, box.y_min, box.z_min]) - margin
    hi = np.array([box.x_max, box.y_max, box.z_max]) + margin
    forward = np.zeros(3)
    forward[axis] = float(sign)
    down = np.array([0.0, 0.0, -1.0])
    right = np.cross(down, forward)
    other = 1 - axis
    centre = 0.5 * (lo + hi)
    centre[axis] = lo[axis] if sign > 0 else hi[axis]
    span_h = hi[other] - lo[other]
    span_v = hi[2] - lo[2]
    return _grid(centre, right, down, forward, span_h, span_v, hi[axis] - lo[axis], feature)


def top_view(box: Extent, margin: float, feature: float = FEATURE, from_below: bool = False) -> View:
    """A coarse view of ``box`` from above, looking down (image rows along −y, columns along +x), or from below,
    looking up (rows along +y)."""
    lo = np.array([box.x_min, box.y_min, box.z_min]) - margin
    hi = np.array([box.x_max, box.y_max, box.z_max]) + margin
    centre = 0.5 * (lo + hi)
    centre[2] = lo[2] if from_below else hi[2]
    sign = 1.0 if from_below else -1.0
    return _grid(centre, np.array([1.0, 0.0, 0.0]), np.array([0.0, sign, 0.0]), np.array([0.0, 0.0, sign]),
                 hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], feature)


def _grid(centre: np.ndarray, right: np.ndarray, down: np.ndarray, forward: np.ndarray, span_h: float, span_v: float,
          depth: float, feature: float) -> View:
    pixel = max(min(max(span_h, span_v) / COARSE, feature), math.sqrt(span_h * span_v / MAX_PIXELS))
    w = int(math.ceil(span_h / pixel)) + 1
    h = int(math.ceil(span_v / pixel)) + 1
    return View(centre, right, down, forward, pixel, w, h, depth + 1.0)


def extreme(probe: Probe, view: View, key: Callable[[np.ndarray], np.ndarray],
            first: np.ndarray | None = None, hint: np.ndarray | None = None) -> float | None:
    """The smallest ``key`` (a function of (..., 3) hit points, m) over what ``probe`` hits in ``view``, refined
    around the pixel that held it until pixels are :data:`FINEST`; None when nothing is hit. ``first``: ``view``'s
    image already cast. ``hint``: a world point (m) near which the extreme is expected (a model's extreme vertex):
    the image is refined around its pixel too, so that a part thinner than the coarse pixels is found there."""
    d = probe(view) if first is None else first
    starts = [(view, d)]
    if hint is not None:
        starts.append((view.around(*view.pixel_of(hint)), None))
    found = [_refined(probe, v, key, img) for v, img in starts]
    return min((f for f in found if f is not None), default=None)


def _refined(probe: Probe, view: View, key: Callable[[np.ndarray], np.ndarray], d: np.ndarray | None) -> float | None:
    """The extreme of the finest image that sees anything: a coarse pixel only says where to look (a lone pixel that
    a closer look does not confirm — a rasteriser's speck on a triangle seen edge-on — does not count)."""
    best: float | None = None
    if d is None:
        d = probe(view)
    while True:
        hit = np.isfinite(d)
        if not hit.any():
            return best
        pts = view.origins() + np.where(hit, d, 0.0)[..., None] * view.forward
        k = np.where(hit, key(pts), np.inf)
        row, col = np.unravel_index(int(np.argmin(k)), k.shape)
        best = float(k[row, col])
        if view.pixel <= FINEST:
            return best
        view = view.around(int(row), int(col))
        d = probe(view)


def measure(probe: Probe, box: Extent, *, horizontal: bool = True, heights: bool = True,
            margin: float = 0.05, feature: float = FEATURE, from_below: bool = False,
            hints: dict[str, np.ndarray] | None = None) -> dict[str, float | None]:
    """The box of what ``probe`` sees around ``box`` (the expected one): each bound the extreme of the hit points.

    ``horizontal``: x and y bounds from views along ±x and ±y, z bounds from the one along +x (``heights``; False
    for the plain 2D caster, whose solids have no height): the highest point of an object is hit by the row of rays
    at its height, whatever the rays meet first; otherwise (flat elements) every bound from a view from above.
    ``hints``: per bound (``x_min``, ...), a point (m, world) where it is expected (see :func:`extreme`).
    ``feature``: the largest coarse pixel (m). ``from_below``: flat elements are looked at from below (a ceiling
    drawn for the cameras from below only).
    Returns x_min, x_max, y_min, y_max, z_min, z_max (m; None where nothing was seen or not measured).
    """
    out: dict[str, float | None] = {}
    if horizontal:
        views = {(a, sg): side_view(box, a, sg, margin, feature) for a in (0, 1) for sg in (1, -1)}
        images = {k: probe(v) for k, v in views.items()}
        h = hints or {}
        for axis, name in ((0, "x"), (1, "y")):
            lo = extreme(probe, views[axis, 1], lambda p, a=axis: p[..., a], images[axis, 1], h.get(f"{name}_min"))
            hi = extreme(probe, views[axis, -1], lambda p, a=axis: -p[..., a], images[axis, -1],
                         h.get(f"{name}_max"))
            out[f"{name}_min"], out[f"{name}_max"] = lo, None if hi is None else -hi
        if heights:
            zlo = extreme(probe, views[0, 1], lambda p: p[..., 2], images[0, 1], h.get("z_min"))
            zhi = extreme(probe, views[0, 1], lambda p: -p[..., 2], images[0, 1], h.get("z_max"))
            out["z_min"], out["z_max"] = zlo, None if zhi is None else -zhi
        return out
    top = top_view(box, margin, feature, from_below)
    image = probe(top)
    for a, name in ((0, "x"), (1, "y"), (2, "z")):
        lo = extreme(probe, top, lambda p, a=a: p[..., a], image)
        hi = extreme(probe, top, lambda p, a=a: -p[..., a], image)
        out[f"{name}_min"], out[f"{name}_max"] = lo, None if hi is None else -hi
    return out


# ------------------------------------------------------------------------------------------------ the physics
def body_xy(body: Any) -> np.ndarray:
    """(N, 2) world points (m) of a Box2D body's fixtures: polygon vertices, and circles as their bounding squares'
    corners."""
    pts = []
    tf = body.transform
    for f in body.fixtures:
        s = f.shape
        if hasattr(s, "vertices"):
            pts.extend((tf * v).tuple for v in s.vertices)
        else:
            c = tf * s.pos
            pts.extend((c[0] + dx * s.radius, c[1] + dy * s.radius) for dx in (-1, 1) for dy in (-1, 1))
    return np.array(pts, dtype=np.float64).reshape(-1, 2)


def xy_box(points: np.ndarray) -> tuple[float, float, float, float]:
    """(x_min, x_max, y_min, y_max) of (N, 2) points."""
    return (float(points[:, 0].min()), float(points[:, 0].max()), float(points[:, 1].min()),
            float(points[:, 1].max()))
