"""Collision flags: whether each body touches, or nearly touches, another one (reference §2.4).

:meth:`~mvsim_core.dynamics.bodies.Bodies.collisions` needs every contact of every body each step; through pybox2d
that is ~1 µs per contact plus ~7 µs per ``b2Distance`` for the threshold test (5 vehicles in a corridor: 35 µs,
115 µs with the default 3 cm threshold). A numba kernel (:func:`collision_flags_raw`) walks Box2D's contact lists in
memory instead (offsets checked once against the API and ``b2Distance`` on a probe scene, :func:`raw_contacts_ok`;
same switch as the raw body view of :mod:`.box2d_raw`): ~3 µs, ~9 µs with the threshold; 100 vehicles pressed
against grid walls (3200 contacts): 20 µs / 210 µs instead of 5 ms. :func:`collision_flags_api` is the same through
pybox2d.

Byte offsets (Box2D 2.3.x, 64-bit; checked against the API on a probe scene before use): b2Body::m_xf 12,
m_contactList 136; b2ContactEdge::other 0, contact 8, next 24; b2Contact::m_flags 8 (touching = 2), m_fixtureA 96,
m_fixtureB 104; b2Fixture::m_body 16, m_shape 24, m_isSensor 58; b2PolygonShape: m_type 8 (polygon = 2), m_radius 12,
m_vertices 24, m_count 280.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import Box2D
import numpy as np

from mvsim_core.dynamics.box2d_raw import MEM_HI, MEM_LO, body_address, memory
from mvsim_core.jit import njit

log = logging.getLogger("mvsim_core.dynamics")

_B_XF, _B_CONTACTS = 12, 136
_E_OTHER, _E_CONTACT, _E_NEXT = 0, 8, 24
_C_FLAGS, _C_FA, _C_FB = 8, 96, 104
_F_BODY, _F_SHAPE, _F_SENSOR = 16, 24, 58
_S_TYPE, _S_RADIUS, _S_VERTS, _S_COUNT = 8, 12, 24, 280
_TOUCHING, _POLYGON = 2, 2
_raw_contacts: bool | None = None


@njit(cache=True)
def _ptr(m64: np.ndarray, a: int) -> int:
    return m64[(a - MEM_LO) >> 3]


@njit(cache=True)
def _i32(m32: np.ndarray, a: int) -> int:
    return m32[(a - MEM_LO) >> 2]


@njit(cache=True)
def _f32(mf: np.ndarray, a: int) -> float:
    return mf[(a - MEM_LO) >> 2]


@njit(cache=True)
def _valid(p: int) -> bool:
    return MEM_LO <= p < MEM_HI - 512 and p % 8 == 0


@njit(cache=True)
def _world_polygon(m32: np.ndarray, mf: np.ndarray, m64: np.ndarray, fixture: int,
                   out: np.ndarray) -> tuple[int, float]:
    """Vertices (world frame) of a polygon fixture into ``out``; (count, skin radius), count -1 if not a polygon."""
    body = _ptr(m64, fixture + _F_BODY)
    shape = _ptr(m64, fixture + _F_SHAPE)
    if not (_valid(body) and _valid(shape)) or _i32(m32, shape + _S_TYPE) != _POLYGON:
        return -1, 0.0
    n = _i32(m32, shape + _S_COUNT)
    if n < 3 or n > out.shape[0]:
        return -1, 0.0
    px, py = _f32(mf, body + _B_XF), _f32(mf, body + _B_XF + 4)
    sn, cs = _f32(mf, body + _B_XF + 8), _f32(mf, body + _B_XF + 12)
    for i in range(n):
        vx, vy = _f32(mf, shape + _S_VERTS + 8 * i), _f32(mf, shape + _S_VERTS + 8 * i + 4)
        out[i, 0] = px + cs * vx - sn * vy
        out[i, 1] = py + sn * vx + cs * vy
    return n, _f32(mf, shape + _S_RADIUS)


@njit(cache=True)
def _max_separation(a: np.ndarray, na: int, b: np.ndarray, nb: int) -> float:
    """Largest separation of b's vertices from a's edges (CCW a; > 0: a separating axis exists)."""
    best = -1e300
    for i in range(na):
        x0, y0 = a[i, 0], a[i, 1]
        j = i + 1 if i + 1 < na else 0
        ex, ey = a[j, 0] - x0, a[j, 1] - y0
        ln = math.sqrt(ex * ex + ey * ey)
        if ln == 0.0:
            continue
        nx, ny = ey / ln, -ex / ln
        m = 1e300
        for k in range(nb):
            d = nx * (b[k, 0] - x0) + ny * (b[k, 1] - y0)
            if d < m:
                m = d
        if m > best:
            best = m
    return best


@njit(cache=True)
def _vertex_edge_distance(a: np.ndarray, na: int, b: np.ndarray, nb: int) -> float:
    """Smallest distance from a vertex of a to an edge of b."""
    best = 1e300
    for i in range(nb):
        x0, y0 = b[i, 0], b[i, 1]
        j = i + 1 if i + 1 < nb else 0
        ex, ey = b[j, 0] - x0, b[j, 1] - y0
        ee = ex * ex + ey * ey
        for k in range(na):
            px, py = a[k, 0] - x0, a[k, 1] - y0
            t = 0.0 if ee == 0.0 else min(1.0, max(0.0, (px * ex + py * ey) / ee))
            dx, dy = px - t * ex, py - t * ey
            d = dx * dx + dy * dy
            if d < best:
                best = d
    return math.sqrt(best)


@njit(cache=True)
def polygon_distance(a: np.ndarray, na: int, b: np.ndarray, nb: int, cutoff: float = math.inf) -> float:
    """Distance (m) between two convex CCW polygons (first na / nb rows of a / b), 0 when they overlap. When their
    bounding boxes are ``cutoff`` or more apart, that gap (a lower bound, >= cutoff) is returned instead."""
    gap = max(a[:na, 0].min() - b[:nb, 0].max(), b[:nb, 0].min() - a[:na, 0].max(),
              a[:na, 1].min() - b[:nb, 1].max(), b[:nb, 1].min() - a[:na, 1].max())
    if gap >= cutoff:
        return gap
    if max(_max_separation(a, na, b, nb), _max_separation(b, nb, a, na)) <= 0.0:
        return 0.0
    return min(_vertex_edge_distance(a, na, b, nb), _vertex_edge_distance(b, nb, a, na))


@njit(cache=True)
def collision_flags_raw(m8: np.ndarray, m32: np.ndarray, mf: np.ndarray, m64: np.ndarray, bodies: np.ndarray,
                        threshold: float, out: np.ndarray) -> int:
    """out[k] = body k has a contact between non-sensor fixtures that is touching or, for polygons, whose distance
    (skins included) is below ``threshold``. Returns the number of bodies flagged, or -1 on a pointer that cannot be
    right.

    Two passes: Box2D's touching bit first, for every body (a few loads per contact); then the distance test, only
    for the bodies that touch nothing (a body pressed against a wall has a dozen near contacts whose distances need
    not be computed once one of them touches)."""
    hits = 0
    for k in range(bodies.size):
        hit = False
        if not _valid(bodies[k]):
            return -1
        e = _ptr(m64, bodies[k] + _B_CONTACTS)
        guard = 0
        while e != 0 and not hit:
            c = _ptr(m64, e + _E_CONTACT) if _valid(e) else 0
            if not _valid(c):
                return -1
            fa, fb = _ptr(m64, c + _C_FA), _ptr(m64, c + _C_FB)
            if not (_valid(fa) and _valid(fb)):
                return -1
            if (m8[fa + _F_SENSOR - MEM_LO] == 0 and m8[fb + _F_SENSOR - MEM_LO] == 0
                    and _i32(m32, c + _C_FLAGS) & _TOUCHING):
                hit = True
            e = _ptr(m64, e + _E_NEXT)
            guard += 1
            if guard > 10_000_000:
                return -1
        out[k] = hit
        hits += hit
    if threshold <= 0.0:
        return hits
    pa = np.empty((16, 2))
    pb = np.empty((16, 2))
    for k in range(bodies.size):  # (the lists were checked by the first pass)
        if out[k]:
            continue
        hit = False
        e = _ptr(m64, bodies[k] + _B_CONTACTS)
        while e != 0 and not hit:
            c = _ptr(m64, e + _E_CONTACT)
            fa, fb = _ptr(m64, c + _C_FA), _ptr(m64, c + _C_FB)
            if m8[fa + _F_SENSOR - MEM_LO] == 0 and m8[fb + _F_SENSOR - MEM_LO] == 0:
                na, ra = _world_polygon(m32, mf, m64, fa, pa)
                nb, rb = _world_polygon(m32, mf, m64, fb, pb)
                if na > 0 and nb > 0:
                    reach = threshold + ra + rb
                    hit = polygon_distance(pa, na, pb, nb, reach) < reach
            e = _ptr(m64, e + _E_NEXT)
        out[k] = hit
        hits += hit
    return hits


def raw_contacts_ok() -> bool:
    """Whether the compiled contact walk reads this binding's structs right (checked once, on a probe scene)."""
    global _raw_contacts
    if _raw_contacts is None:
        try:
            _raw_contacts = _probe_contacts()
        except Exception:  # noqa: BLE001 - any surprise means: use the API
            _raw_contacts = False
        if not _raw_contacts:
            log.info("Box2D contact layout not recognised; collision flags go through the pybox2d API")
    return _raw_contacts


def _probe_contacts() -> bool:
    mem = memory()
    m8, m32, mf, m64 = mem

    def ptr(a: int) -> int:
        return int(m64[(a - MEM_LO) >> 3])

    # a: near misses only (cores 3.5 cm and 12 cm away; skins 1 cm each) and an overlapping sensor;
    # b: touching a wall; s: the static body holding the other fixtures
    w = Box2D.b2World(gravity=(0, 0))
    a = w.CreateDynamicBody(position=(0.25, -0.5), angle=0.2)
    fa = a.CreatePolygonFixture(box=(0.5, 0.4), density=1.0)
    s = w.CreateStaticBody(position=(0.5, 0.25), angle=-0.3)
    fixtures = []
    for gap in (0.035, -0.12):
        x = (0.5 + abs(gap) + 0.05) * math.copysign(1.0, gap)
        centre = s.GetLocalPoint(a.GetWorldPoint((x, 0.0)))
        fixtures.append(s.CreatePolygonFixture(box=(0.05, 0.3, tuple(centre), 0.5)))
    sensor = s.CreatePolygonFixture(box=(0.3, 0.3, tuple(s.GetLocalPoint(a.position)), 0.0))
    sensor.sensor = True
    b = w.CreateDynamicBody(position=(10.0, 0.0))
    b.CreatePolygonFixture(vertices=[(0.0, 0.0), (1.0, 0.0), (0.5, 0.8)], density=1.0)
    s.CreatePolygonFixture(box=(0.5, 0.5, tuple(s.GetLocalPoint((10.5, -0.5))), 0.0))
    w.Step(0.001, 8, 3)
    edges = {int(ed.this): ed for ed in a.contacts}  # pybox2d lists them in its own order
    walked, e = [], ptr(body_address(a) + _B_CONTACTS)
    while e in edges and e not in walked:
        walked.append(e)
        e = ptr(e + _E_NEXT)
    if len(edges) < 3 or e != 0 or set(walked) != set(edges):
        return False
    for ea, ed in edges.items():
        c = ed.contact
        ca = int(c.this)
        if (ptr(ea + _E_OTHER), ptr(ea + _E_CONTACT)) != (int(ed.other.this), ca):
            return False
        if bool(int(m32[(ca + _C_FLAGS - MEM_LO) >> 2]) & _TOUCHING) != c.touching:
            return False
        if (ptr(ca + _C_FA), ptr(ca + _C_FB)) != (int(c.fixtureA.this), int(c.fixtureB.this)):
            return False
    for f in (fa, *fixtures, sensor):
        fp = int(f.this)
        if (ptr(fp + _F_BODY), ptr(fp + _F_SHAPE)) != (int(f.body.this), int(f.shape.this)):
            return False
        if bool(m8[fp + _F_SENSOR - MEM_LO]) != f.sensor:
            return False
        out = np.empty((16, 2))
        n, r = _world_polygon(m32, mf, m64, fp, out)
        want = np.array([tuple(f.body.GetWorldPoint(v)) for v in f.shape.vertices])
        if n != len(want) or abs(r - f.shape.radius) > 1e-7 or not np.allclose(out[:n], want, atol=1e-5):
            return False
    # distances and flags as pybox2d computes them
    for f in fixtures:
        pa_, pb_ = np.empty((16, 2)), np.empty((16, 2))
        na, ra = _world_polygon(m32, mf, m64, int(fa.this), pa_)
        nb, rb = _world_polygon(m32, mf, m64, int(f.this), pb_)
        d = Box2D.b2Distance(shapeA=fa.shape, idxA=0, shapeB=f.shape, idxB=0, transformA=a.transform,
                             transformB=s.transform, useRadii=True).distance
        if abs(max(polygon_distance(pa_, na, pb_, nb, math.inf) - ra - rb, 0.0) - d) > 1e-4:
            return False
    flags = np.zeros(3, dtype=np.bool_)
    expect = {0.0: [False, True, True], 0.01: [False, True, True], 0.05: [True, True, True]}
    for thr, want_flags in expect.items():
        if collision_flags_raw(*mem, np.array([body_address(x) for x in (a, b, s)], dtype=np.int64), thr, flags) < 0:
            return False
        if flags.tolist() != want_flags or collision_flags_api(w, {a: 0, b: 1, s: 2}, thr) != want_flags:
            return False
    return True


def collision_flags_api(b2world: Any, index: dict[Any, int], threshold: float) -> list[bool]:
    """The pybox2d-API version of :func:`collision_flags_raw` for the bodies in ``index`` (body -> slot)."""
    out = [False] * len(index)
    keys = {int(b.this): k for b, k in index.items()}
    for c in b2world.contacts:
        fa, fb = c.fixtureA, c.fixtureB
        if fa.sensor or fb.sensor:
            continue
        ba, bb = fa.body, fb.body
        ka, kb = keys.get(int(ba.this)), keys.get(int(bb.this))
        if not ((ka is not None and not out[ka]) or (kb is not None and not out[kb])):
            continue
        hit = c.touching
        if not hit and threshold > 0:
            d = Box2D.b2Distance(shapeA=fa.shape, idxA=c.childIndexA, shapeB=fb.shape, idxB=c.childIndexB,
                                 transformA=ba.transform, transformB=bb.transform, useRadii=True)
            hit = d.distance < threshold
        if hit:
            for k in (ka, kb):
                if k is not None:
                    out[k] = True
    return out
