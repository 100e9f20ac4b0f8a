"""Collision flags: whether each body touches, or nearly touches, another one (reference §2.4).

:meth:`~mvsim_core.dynamics.bodies.Bodies.collisions` needs every contact of every body each step; through pybox2d
that is ~1 µs per contact plus ~7 µs per ``b2Distance`` for the threshold test (5 vehicles in a corridor: 35 µs,
115 µs with the default 3 cm threshold). A numba kernel (:func:`collision_flags_raw`) walks Box2D's contact lists in
memory instead, through the contact accessors of :mod:`.box2d_raw` (which owns the offsets; the layout is checked
once against the API on a probe scene, and the flags against the API and ``b2Distance``, :func:`raw_contacts_ok`;
same switch as the raw body view): ~3 µs, ~9 µs with the threshold; 100 vehicles pressed against grid walls (3200
contacts): 20 µs / 210 µs instead of 5 ms. :func:`collision_flags_api` is the same through pybox2d.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import Box2D
import numpy as np

from mvsim_core.dynamics.box2d_raw import (
    body_address,
    body_addresses,
    contact_fixtures,
    contact_layout_ok,
    contact_list,
    contact_probe_scene,
    contact_touching,
    edge_contact,
    edge_next,
    fixture_is_sensor,
    valid_ptr,
    views_for,
    world_polygon,
)
from mvsim_core.jit import njit

log = logging.getLogger("mvsim_core.dynamics")

_raw_contacts: bool | None = None


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
        if not valid_ptr(bodies[k]):
            return -1
        e = contact_list(m64, bodies[k])
        guard = 0
        while e != 0 and not hit:
            c = edge_contact(m64, e) if valid_ptr(e) else 0
            if not valid_ptr(c):
                return -1
            fa, fb = contact_fixtures(m64, c)
            if not (valid_ptr(fa) and valid_ptr(fb)):
                return -1
            if not fixture_is_sensor(m8, fa) and not fixture_is_sensor(m8, fb) and contact_touching(m32, c):
                hit = True
            e = edge_next(m64, e)
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
        e = contact_list(m64, bodies[k])
        while e != 0 and not hit:
            c = edge_contact(m64, e)
            fa, fb = contact_fixtures(m64, c)
            if not fixture_is_sensor(m8, fa) and not fixture_is_sensor(m8, fb):
                na, ra = world_polygon(m32, mf, m64, fa, pa)
                nb, rb = world_polygon(m32, mf, m64, fb, pb)
                if na > 0 and nb > 0:
                    reach = threshold + ra + rb
                    hit = polygon_distance(pa, na, pb, nb, reach) < reach
            e = edge_next(m64, e)
        out[k] = hit
        hits += hit
    return hits


def raw_contacts_ok() -> bool:
    """Whether the compiled contact walk reads this binding's structs right and flags as the API does (checked once,
    on :func:`~.box2d_raw.contact_probe_scene`)."""
    global _raw_contacts
    if _raw_contacts is None:
        try:
            _raw_contacts = contact_layout_ok() and _probe_flags()
        except Exception:  # noqa: BLE001 - any surprise means: use the API
            _raw_contacts = False
        if not _raw_contacts:
            log.info("Box2D contact layout not recognised; collision flags go through the pybox2d API")
    return _raw_contacts


def _probe_flags() -> bool:
    """Distances and flags of the compiled walk against ``b2Distance`` and :func:`collision_flags_api`."""
    p = contact_probe_scene()
    a, b, s, fa = p.a, p.b, p.s, p.fa
    mem = views_for([a, b, s, fa, *p.near])
    if mem is None:
        return False
    _, m32, mf, m64 = mem
    for f in p.near:
        pa_, pb_ = np.empty((16, 2)), np.empty((16, 2))
        na, ra = world_polygon(m32, mf, m64, body_address(fa), pa_)
        nb, rb = world_polygon(m32, mf, m64, body_address(f), pb_)
        d = Box2D.b2Distance(shapeA=fa.shape, idxA=0, shapeB=f.shape, idxB=0, transformA=a.transform,
                             transformB=s.transform, useRadii=True).distance
        if abs(max(polygon_distance(pa_, na, pb_, nb, math.inf) - ra - rb, 0.0) - d) > 1e-4:
            return False
    flags = np.zeros(3, dtype=np.bool_)
    expect = {0.0: [False, True, True], 0.01: [False, True, True], 0.05: [True, True, True]}
    for thr, want_flags in expect.items():
        if collision_flags_raw(*mem, body_addresses([a, b, s]), thr, flags) < 0:
            return False
        if flags.tolist() != want_flags or collision_flags_api(p.world, {a: 0, b: 1, s: 2}, thr) != want_flags:
            return False
    return True


def collision_flags_api(b2world: Any, index: dict[Any, int], threshold: float) -> list[bool]:
    """The pybox2d-API version of :func:`collision_flags_raw` for the bodies in ``index`` (body -> slot)."""
    out = [False] * len(index)
    keys = {body_address(b): k for b, k in index.items()}
    for c in b2world.contacts:
        fa, fb = c.fixtureA, c.fixtureB
        if fa.sensor or fb.sensor:
            continue
        ba, bb = fa.body, fb.body
        ka, kb = keys.get(body_address(ba)), keys.get(body_address(bb))
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
