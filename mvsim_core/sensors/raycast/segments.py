"""Ray casting against 2D segments: the outlines of blocks, walls, vertical planes and vehicles.

Every solid is a closed polygon whose edges are stored counter-clockwise (interior on the left); a ray only hits an
edge it meets from the outside (the edge's outward normal opposes the ray), as Box2D's polygon ray cast does: a ray
that starts inside a polygon does not see it, and each edge is rejected by one sign test for half of the rays.
A polygon of (almost) zero area gets both orientations of its edges, so it is seen from either side.

Segments carry a height range [zmin, zmax] (m, world): a ray in ``raytrace_3d`` mode at height h hits a segment only
when zmin ≤ h ≤ zmax; in 2D mode heights are ignored (every solid is infinitely tall).

Two kinds of sets:

* :class:`StaticSegments` — fixed geometry, binned once into a uniform grid of square buckets;
* :class:`MovingSegments` — objects that move (vehicles: chassis + wheels; dynamic blocks), placed each call from their
  poses (:meth:`MovingSegments.place`), each with a bounding circle.

Casting (:func:`cast_segments`, through :func:`cast_sets`) works per run of rays that share an origin (the rays of one
lidar): the static segments within reach of the origin (from the nearby buckets) that face it are filed by the angular
sectors they cover, seen from the origin, and each moving object within reach by the sectors of its bounding circle,
with the list of its segments that face the origin; a sector gets only what one of its rays can still reach (an
occupancy grid's nearer hits cut the rays short). Each ray then tests only the segments of its sector. Angles are
"pseudo-angles" (:func:`pseudo_angle`): monotonic in the true angle, no trigonometry. Rays from scattered origins still
work, each paying for the selection on its own.

Layout of a segment row (float64): ``ax, ay, ex, ey, zmin, zmax, modes`` — start point (m), edge vector b − a (m),
heights (m), and which rays see it: :data:`SEEN_2D` (1) by 2D rays, :data:`SEEN_3D` (2) by ``raytrace_3d`` rays, 3 by
both. (A vertical plane's door is a gap for 2D rays at any height, while a 3D ray above it meets the lintel: its 2D
outline and its 3D pieces are two sets of segments, each seen by one kind of ray.)
"""

from __future__ import annotations

import math

import numpy as np

from mvsim_core.geometry.polygons import signed_area
from mvsim_core.jit import njit, prange
from mvsim_core.threads import threaded, use_threads

SEG_COLS = 7
SEEN_2D = 1
SEEN_3D = 2
SEEN_BOTH = SEEN_2D | SEEN_3D
NO_OWNER = -1
"""Owner of segments that belong to no vehicle (never excluded)."""

DEGENERATE_AREA = 1e-12  # m²: below this a polygon is seen from both sides
N_SECTORS = 256
"""Angular sectors per run of rays sharing an origin (see :func:`cast_segments`)."""
SECTOR_PAD = 1e-9  # pseudo-angle units added on each side of a segment's angular span (rounding)
MAX_BUCKETS_PER_AXIS = 1024


# ---------------------------------------------------------------------------------------------------- geometry prep
def polygon_edges(poly: np.ndarray, zmin: float = -math.inf, zmax: float = math.inf,
                  modes: int = SEEN_BOTH) -> np.ndarray:
    """Edges of a closed polygon as segment rows, oriented counter-clockwise.

    Args:
        poly: (P, 2) vertices (m), either orientation; the last vertex connects to the first.
        zmin, zmax: height range of the solid (m, world).
        modes: which rays see it (:data:`SEEN_2D`, :data:`SEEN_3D` or both).

    Returns:
        (E, 7) segment rows; E = P (2P for a degenerate polygon, 0 for fewer than 2 points).
    """
    p = np.asarray(poly, dtype=np.float64).reshape(-1, 2)
    if len(p) < 2:
        return np.zeros((0, SEG_COLS))
    q = np.roll(p, -1, axis=0)
    area = signed_area(p)
    if area < 0.0:
        p, q = q[::-1], p[::-1]  # reversed traversal: edges b -> a
    rows = np.column_stack([p, q - p, np.full(len(p), zmin), np.full(len(p), zmax), np.full(len(p), float(modes))])
    if abs(area) < DEGENERATE_AREA:
        rows = np.vstack([rows, np.column_stack([q, p - q, rows[:, 4:]])])
    keep = (rows[:, 2] != 0.0) | (rows[:, 3] != 0.0)
    return np.ascontiguousarray(rows[keep])


def transform_polygon(poly: np.ndarray, x: float, y: float, yaw: float) -> np.ndarray:
    """Polygon (P, 2) from an object frame to the world frame, with the object at (x, y) m and ``yaw`` rad."""
    p = np.asarray(poly, dtype=np.float64).reshape(-1, 2)
    c, s = math.cos(yaw), math.sin(yaw)
    return np.column_stack([x + c * p[:, 0] - s * p[:, 1], y + s * p[:, 0] + c * p[:, 1]])


# ---------------------------------------------------------------------------------------------------- kernels
@njit(cache=True, inline="always")
def _hit(seg: np.ndarray, k: int, ox: float, oy: float, dx: float, dy: float, best: float) -> float:
    """Distance along the ray to segment ``k`` if it is hit from the outside closer than ``best``, else ``best``
    (heights and modes are checked when the segment is selected for a run of rays; so is finiteness).

    Branch-free (the tests combined, the distance selected): which segments a ray hits cannot be predicted, and a
    mispredicted branch costs more than the division."""
    ex, ey = seg[k, 2], seg[k, 3]
    den = dx * ey - dy * ex  # cross(d, e) < 0: the edge faces the ray
    wx, wy = seg[k, 0] - ox, seg[k, 1] - oy
    nt = wx * ey - wy * ex  # t = nt / den, in (0, best)
    nu = wx * dy - wy * dx  # u = nu / den, in [0, 1]
    ok = (den < 0.0) & (nt <= 0.0) & (nt > best * den) & (nu <= 0.0) & (nu >= den)
    t = nt / (den if ok else -1.0)
    return t if ok else best


@njit(cache=True, inline="always")
def pseudo_angle(x: float, y: float) -> float:
    """A monotonic stand-in for atan2(y, x) in [0, 4) ("diamond angle"): 0 along +x, 1 along +y, 2 along −x, 3
    along −y; the opposite direction is 2 further (mod 4). No trigonometry: one division."""
    if y >= 0.0:
        if x >= 0.0:
            return y / (x + y) if x + y > 0.0 else 0.0
        return 1.0 - x / (y - x)
    if x < 0.0:
        return 2.0 - y / (-x - y)
    return 3.0 + x / (x - y)


@njit(cache=True, inline="always")
def _seg_distance(seg: np.ndarray, k: int, x0: float, y0: float) -> float:
    """Distance (m) from (x0, y0) to segment k."""
    ax, ay, ex, ey = seg[k, 0], seg[k, 1], seg[k, 2], seg[k, 3]
    wx, wy = x0 - ax, y0 - ay
    ee = ex * ex + ey * ey
    u = (wx * ex + wy * ey) / ee if ee > 0.0 else 0.0
    u = min(max(u, 0.0), 1.0)
    return math.hypot(wx - u * ex, wy - u * ey)


@njit(cache=True, inline="always")
def _sector_span(pa: float, pb: float, n_sectors: int) -> tuple[int, int]:
    """The angular sectors between the pseudo-angles ``pa`` and ``pb`` (less than a half turn apart, either order),
    padded by :data:`SECTOR_PAD` each side: (first sector, count)."""
    span = pb - pa
    if span > 2.0:
        span -= 4.0
    elif span <= -2.0:
        span += 4.0
    lo = pa if span >= 0.0 else pb
    lo -= SECTOR_PAD
    if lo < 0.0:
        lo += 4.0
    scale = n_sectors * 0.25
    s0 = int(lo * scale)
    s1 = int((lo + abs(span) + 2.0 * SECTOR_PAD) * scale)
    return s0, min(s1 - s0 + 1, n_sectors)


@njit(cache=True, inline="always")
def _candidate(seg: np.ndarray, k: int, x0: float, y0: float, h: float, uz: bool, reach: float,
               n_sectors: int) -> tuple[int, int, float]:
    """Whether a ray from (x0, y0) at height h can hit segment k within ``reach``; if so, the first of the angular
    sectors it spans, how many, and the segment's distance from the origin (m) (else (0, 0, inf)). Only the side
    facing the origin can be hit."""
    ax, ay, ex, ey = seg[k, 0], seg[k, 1], seg[k, 2], seg[k, 3]
    wx, wy = ax - x0, ay - y0
    if wx * ey - wy * ex >= 0.0:  # the origin is behind (or on the line of) the edge
        return 0, 0, math.inf
    if not int(seg[k, 6]) & (SEEN_3D if uz else SEEN_2D):
        return 0, 0, math.inf
    if uz and not (seg[k, 4] <= h <= seg[k, 5]):
        return 0, 0, math.inf
    d = _seg_distance(seg, k, x0, y0)
    if d >= reach:
        return 0, 0, math.inf
    pa = pseudo_angle(wx, wy)
    pb = pseudo_angle(wx + ex, wy + ey)
    if not (pa >= 0.0 and pb >= 0.0):  # NaN: a non-finite origin or segment is never hit
        return 0, 0, math.inf
    s0, ns = _sector_span(pa, pb, n_sectors)
    return s0, ns, d


@njit(cache=True, inline="always")
def _facing(seg: np.ndarray, k: int, x0: float, y0: float, h: float, uz: bool) -> bool:
    """Whether segment k (of a moving object) faces the origin (x0, y0) and is seen by its rays (mode, height);
    False for a non-finite one. Branch-free, as :func:`_hit`."""
    front = (seg[k, 0] - x0) * seg[k, 3] - (seg[k, 1] - y0) * seg[k, 2] < 0.0
    seen = (int(seg[k, 6]) & (SEEN_3D if uz else SEEN_2D)) != 0
    return front & seen & ((not uz) | ((seg[k, 4] <= h) & (h <= seg[k, 5])))


@njit(cache=True)
def cast_segments(seg_s: np.ndarray, start: np.ndarray, items: np.ndarray, gx0: float, gy0: float, size: float,
                  gnx: int, gny: int, seg_m: np.ndarray, obj_start: np.ndarray, circle: np.ndarray,
                  obj_z: np.ndarray, owner: np.ndarray, ox: np.ndarray, oy: np.ndarray, dx: np.ndarray,
                  dy: np.ndarray, height: np.ndarray, use_z: np.ndarray, visible: np.ndarray, exclude: np.ndarray,
                  out: np.ndarray, n_sectors: int) -> None:
    """Cast R rays against static and moving segments, keeping the nearest hit.

    Rays are taken in runs of equal origin, height, mode, visibility and owner (the rays of one lidar). For each run:

    * each ray's angular sector, and per sector the farthest any of its rays may still hit (its reach so far:
      nearer hits, e.g. an occupancy grid's, already cut it);
    * static segments from the buckets around the origin that face it (and, in 3D mode, span its height) are filed
      by the sectors they cover, in those where some ray reaches them;
    * a moving object (not the run's own vehicle) is filed as a whole, by the sectors of its bounding circle's
      angular window where some ray reaches the circle, with the list of its segments that face the origin (an
      object around the origin is tested by every ray);
    * each ray then tests the segments filed in its sector.

    A segment is filed wherever a ray could hit it (sector bounds and reaches padded for rounding), so the result is
    the nearest hit over all segments. Moving objects are first binned by their circles' centres
    (:func:`_bin_objects`), so that a run looks only at those whose circle could lie within its reach, and visits
    them in index order, as if it went through all of them: the hits, and so the ranges, are the same bit for bit
    (a fleet's thousand lidars no longer each go through a thousand objects).

    Args:
        seg_s: (S, 7) static rows. start: (gnx·gny + 1,) bucket offsets into ``items`` (bucket = iy·gnx + ix);
            items: static row indices per bucket. gx0, gy0: bucket-grid corner (m). size: bucket side (m).
        seg_m: (M, 7) moving rows (world); object o owns ``obj_start[o]:obj_start[o+1]``. circle: (O, 3) bounding
            circles (cx, cy, radius; m). obj_z: (O, 2) height ranges (m). owner: (O,) vehicle index (−1: none).
        ox, oy: (R,) origins (m). dx, dy: (R,) unit directions. height: (R,) ray heights (m, world).
        use_z: (R,) bool, honour the segments' height ranges. visible: (R,) bool, False skips the ray.
        exclude: (R,) vehicle index whose objects the ray ignores (−1: none).
        out: (R,) in: reach of each ray (m); out: min(reach, nearest hit).
        n_sectors: angular sectors per run (a power of two is not required).
    """
    o_start, o_items, o_other, o_grid, max_rho = _bin_objects(circle)
    bounds = _run_bounds(ox, oy, height, use_z, visible, exclude)
    _cast_runs(0, bounds.shape[0] - 1, bounds, np.empty(ox.shape[0], dtype=np.int64), seg_s, start, items, gx0, gy0,
               size, gnx, gny, seg_m, obj_start, circle, obj_z, owner, ox, oy, dx, dy, height, use_z, visible, exclude,
               out, n_sectors, o_start, o_items, o_other, o_grid, max_rho)


@njit(cache=True, parallel=True)
def cast_segments_threaded(seg_s: np.ndarray, start: np.ndarray, items: np.ndarray, gx0: float, gy0: float,
                           size: float, gnx: int, gny: int, seg_m: np.ndarray, obj_start: np.ndarray,
                           circle: np.ndarray, obj_z: np.ndarray, owner: np.ndarray, ox: np.ndarray, oy: np.ndarray,
                           dx: np.ndarray, dy: np.ndarray, height: np.ndarray, use_z: np.ndarray, visible: np.ndarray,
                           exclude: np.ndarray, out: np.ndarray, n_sectors: int, chunks: int) -> None:
    """:func:`cast_segments` on numba's threads: the runs of rays cut into ``chunks`` pieces shared among them
    (``prange``), each with its own scratch arrays. A run's rays are cast as :func:`cast_segments` casts them, so the
    ranges are bit-identical. Arguments as there."""
    o_start, o_items, o_other, o_grid, max_rho = _bin_objects(circle)
    bounds = _run_bounds(ox, oy, height, use_z, visible, exclude)
    n_runs = bounds.shape[0] - 1
    ray_sector = np.empty(ox.shape[0], dtype=np.int64)
    for c in prange(chunks):
        _cast_runs(n_runs * c // chunks, n_runs * (c + 1) // chunks, bounds, ray_sector, seg_s, start, items, gx0,
                   gy0, size, gnx, gny, seg_m, obj_start, circle, obj_z, owner, ox, oy, dx, dy, height, use_z, visible,
                   exclude, out, n_sectors, o_start, o_items, o_other, o_grid, max_rho)


@njit(cache=True)
def _run_bounds(ox: np.ndarray, oy: np.ndarray, height: np.ndarray, use_z: np.ndarray, visible: np.ndarray,
                exclude: np.ndarray) -> np.ndarray:
    """(runs + 1,) offsets of the runs of rays of :func:`cast_segments`: consecutive rays of the same origin, mode,
    visibility and owner, and of the same height where it is honoured (the rays of one lidar)."""
    n = ox.shape[0]
    bounds = np.empty(n + 1, dtype=np.int64)
    m = 0
    r0 = 0
    while r0 < n:
        bounds[m] = r0
        m += 1
        x0, y0, h, uz, vis, ex = ox[r0], oy[r0], height[r0], use_z[r0], visible[r0], exclude[r0]
        r1 = r0 + 1
        while (r1 < n and ox[r1] == x0 and oy[r1] == y0 and use_z[r1] == uz and visible[r1] == vis
               and exclude[r1] == ex and (height[r1] == h or not uz)):
            r1 += 1
        r0 = r1
    bounds[m] = n
    return bounds[:m + 1].copy()


@njit(cache=True)
def _cast_runs(run_lo: int, run_hi: int, bounds: np.ndarray, ray_sector: np.ndarray, seg_s: np.ndarray,
               start: np.ndarray, items: np.ndarray, gx0: float, gy0: float, size: float, gnx: int, gny: int,
               seg_m: np.ndarray, obj_start: np.ndarray, circle: np.ndarray, obj_z: np.ndarray, owner: np.ndarray,
               ox: np.ndarray, oy: np.ndarray, dx: np.ndarray, dy: np.ndarray, height: np.ndarray, use_z: np.ndarray,
               visible: np.ndarray, exclude: np.ndarray, out: np.ndarray, n_sectors: int, o_start: np.ndarray,
               o_items: np.ndarray, o_other: np.ndarray, o_grid: np.ndarray, max_rho: float) -> None:
    """Runs ``run_lo:run_hi`` of ``bounds`` (:func:`_run_bounds`) cast as :func:`cast_segments` describes, with the
    moving objects' bins of :func:`_bin_objects`; ``ray_sector``: (R,) scratch, written at these runs' rays only."""
    n_s = seg_s.shape[0]
    n_o = circle.shape[0]
    stamp = np.full(n_s, -1, dtype=np.int64)
    cap = 64
    cand = np.empty(cap, dtype=np.int64)  # ≥ 0: static row k; < 0: moving object −1 − o
    c_s0 = np.empty(cap, dtype=np.int64)
    c_ns = np.empty(cap, dtype=np.int64)
    c_d = np.empty(cap)  # distance from the origin (m)
    sec_start = np.zeros(n_sectors + 1, dtype=np.int64)
    fill = np.empty(n_sectors, dtype=np.int64)
    sec_items = np.empty(cap, dtype=np.int64)
    sec_reach = np.zeros(n_sectors)
    face_lo = np.zeros(n_o, dtype=np.int64)  # per object, its facing rows: face[face_lo[o]:face_hi[o]]
    face_hi = np.zeros(n_o, dtype=np.int64)
    face = np.empty(seg_m.shape[0], dtype=np.int64)
    around = np.empty(n_o, dtype=np.int64)  # objects whose circle holds the origin
    near = np.empty(n_o, dtype=np.int64)  # the objects a run looks at, in index order
    inv = 1.0 / size
    scale = n_sectors * 0.25
    for run in range(run_lo, run_hi):
        # the run of rays sharing this origin (and everything else that selects segments)
        r0, r1 = bounds[run], bounds[run + 1]
        x0, y0, h, uz, vis, ex = ox[r0], oy[r0], height[r0], use_z[r0], visible[r0], exclude[r0]
        reach = out[r0]
        for r in range(r0 + 1, r1):
            reach = max(reach, out[r])
        if not vis or not reach > 0.0 or not (math.isfinite(x0) and math.isfinite(y0)):
            continue  # (a ray from a non-finite origin hits nothing: its reach stays)
        # the rays' sectors and each sector's reach (padded for rounding; 0: no ray there)
        sec_reach[:] = 0.0
        for r in range(r0, r1):
            ddx, ddy = dx[r], dy[r]
            if not out[r] > 0.0 or not abs(ddx) + abs(ddy) < math.inf:  # a non-finite direction hits nothing
                ray_sector[r] = -1                                       # (its NaN pseudo-angle has no sector)
                continue
            sq = min(int(pseudo_angle(ddx, ddy) * scale), n_sectors - 1)
            ray_sector[r] = sq
            sec_reach[sq] = max(sec_reach[sq], out[r] * (1.0 + 1e-9) + 1e-9)
        # candidates: static segments
        nc = 0
        if n_s > 0:
            bx0 = min(max(int((x0 - reach - gx0) * inv), 0), gnx - 1)
            bx1 = min(max(int((x0 + reach - gx0) * inv), 0), gnx - 1)
            by0 = min(max(int((y0 - reach - gy0) * inv), 0), gny - 1)
            by1 = min(max(int((y0 + reach - gy0) * inv), 0), gny - 1)
            for by in range(by0, by1 + 1):
                for bx in range(bx0, bx1 + 1):
                    b = by * gnx + bx
                    for j in range(start[b], start[b + 1]):
                        k = items[j]
                        if stamp[k] == r0:
                            continue
                        stamp[k] = r0
                        s0, ns, d = _candidate(seg_s, k, x0, y0, h, uz, reach, n_sectors)
                        if ns == 0:
                            continue
                        if nc == cap:
                            cap *= 2
                            cand, c_s0, c_ns, c_d = _grown(cand, c_s0, c_ns, c_d, cap)
                        cand[nc], c_s0[nc], c_ns[nc], c_d[nc] = k, s0, ns, d
                        nc += 1
        # candidates: moving objects, each with its facing segments
        n_around = 0
        nf = 0
        n_near = _near_objects(o_start, o_items, o_other, o_grid, max_rho, x0, y0, reach, n_o, near)
        for i_near in range(n_near):
            o = near[i_near]
            face_lo[o] = nf
            face_hi[o] = nf
            if owner[o] >= 0 and owner[o] == ex:
                continue
            if uz and not (obj_z[o, 0] <= h <= obj_z[o, 1]):
                continue
            cwx, cwy, rho = circle[o, 0] - x0, circle[o, 1] - y0, circle[o, 2]
            dc = math.hypot(cwx, cwy)
            gap = dc - rho  # (m) no point of the object is nearer
            if not gap < reach:  # (NaN: never hit)
                continue
            s0, ns = 0, 0
            if dc > rho * 1.001 + 1e-6:  # the origin is outside the circle: its angular window, a sector wider
                sn = rho / dc            # each side for rounding
                cs = math.sqrt(max(1.0 - sn * sn, 0.0))
                s0, ns = _sector_span(pseudo_angle(cwx * cs + cwy * sn, cwy * cs - cwx * sn),
                                      pseudo_angle(cwx * cs - cwy * sn, cwy * cs + cwx * sn), n_sectors)
                s0, ns = s0 - 1 + n_sectors, min(ns + 2, n_sectors)
                far = 0.0
                for q in range(s0, s0 + ns):
                    far = max(far, sec_reach[q % n_sectors])
                if not gap < far:  # every ray that could meet it stops sooner
                    continue
            for k in range(obj_start[o], obj_start[o + 1]):
                face[nf] = k  # (kept when it faces the origin)
                nf += 1 if _facing(seg_m, k, x0, y0, h, uz) else 0
            face_hi[o] = nf
            if nf == face_lo[o]:
                continue
            if ns == 0:
                around[n_around] = o
                n_around += 1
                continue
            if nc == cap:
                cap *= 2
                cand, c_s0, c_ns, c_d = _grown(cand, c_s0, c_ns, c_d, cap)
            cand[nc], c_s0[nc], c_ns[nc], c_d[nc] = -1 - o, s0, ns, gap
            nc += 1
        if nc == 0 and n_around == 0:
            continue
        # file them by sector (CSR), where some ray reaches them
        sec_start[:] = 0
        total = 0
        for i in range(nc):
            for q in range(c_ns[i]):
                sq = (c_s0[i] + q) % n_sectors
                if sec_reach[sq] > c_d[i]:
                    sec_start[sq + 1] += 1
                    total += 1
        for q in range(n_sectors):
            sec_start[q + 1] += sec_start[q]
        if sec_items.shape[0] < total:
            sec_items = np.empty(2 * total, dtype=np.int64)
        fill[:] = sec_start[:-1]
        for i in range(nc):
            for q in range(c_ns[i]):
                sq = (c_s0[i] + q) % n_sectors
                if sec_reach[sq] > c_d[i]:
                    sec_items[fill[sq]] = cand[i]
                    fill[sq] += 1
        # the rays
        for r in range(r0, r1):
            sq = ray_sector[r]
            if sq < 0:
                continue
            best = out[r]
            ddx, ddy = dx[r], dy[r]
            for j in range(sec_start[sq], sec_start[sq + 1]):
                k = sec_items[j]
                if k >= 0:
                    best = _hit(seg_s, k, x0, y0, ddx, ddy, best)
                    continue
                o = -1 - k
                for f in range(face_lo[o], face_hi[o]):
                    best = _hit(seg_m, face[f], x0, y0, ddx, ddy, best)
            for i in range(n_around):
                o = around[i]
                for f in range(face_lo[o], face_hi[o]):
                    best = _hit(seg_m, face[f], x0, y0, ddx, ddy, best)
            out[r] = best


@njit(cache=True)
def _bin_objects(circle: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Moving objects binned by the centres of their bounding circles (cx, cy, radius; m), for
    :func:`_near_objects`: a square grid of about one object per cell over the centres' bounding box.

    Returns (start, items, other, grid, max_rho): bucket offsets (cells + 1,) and object indices (in index order
    within a bucket) of the binned objects; ``other``: the objects left out (a centre or radius that is not finite,
    a negative radius), which every run looks at; ``grid``: (x0, y0, 1/cell width, 1/cell height, nx, ny); the
    largest radius binned (m)."""
    n = circle.shape[0]
    binned = np.zeros(n, dtype=np.bool_)
    x_lo, x_hi, y_lo, y_hi, max_rho = math.inf, -math.inf, math.inf, -math.inf, 0.0
    n_other = 0
    for o in range(n):
        cx, cy, rho = circle[o, 0], circle[o, 1], circle[o, 2]
        if math.isfinite(cx) and math.isfinite(cy) and math.isfinite(rho) and rho >= 0.0:
            binned[o] = True
            x_lo, x_hi = min(x_lo, cx), max(x_hi, cx)
            y_lo, y_hi = min(y_lo, cy), max(y_hi, cy)
            max_rho = max(max_rho, rho)
        else:
            n_other += 1
    other = np.empty(n_other, dtype=np.int64)
    n_other = 0
    for o in range(n):
        if not binned[o]:
            other[n_other] = o
            n_other += 1
    side = max(1, min(int(math.sqrt(n - n_other)), 1024))
    grid = np.zeros(6)
    if n_other < n:
        wx, wy = x_hi - x_lo, y_hi - y_lo
        grid[0], grid[1] = x_lo, y_lo
        grid[2] = side / wx if wx > 0.0 and math.isfinite(side / wx) else 0.0
        grid[3] = side / wy if wy > 0.0 and math.isfinite(side / wy) else 0.0
    grid[4] = side
    grid[5] = side
    count = np.zeros(side * side + 1, dtype=np.int64)
    cell = np.full(n, -1, dtype=np.int64)
    for o in range(n):
        if binned[o]:
            ix = min(int((circle[o, 0] - grid[0]) * grid[2]), side - 1)
            iy = min(int((circle[o, 1] - grid[1]) * grid[3]), side - 1)
            cell[o] = iy * side + ix
            count[cell[o] + 1] += 1
    start = np.cumsum(count)
    fill = start[:-1].copy()
    items = np.empty(start[-1], dtype=np.int64)
    for o in range(n):
        if cell[o] >= 0:
            items[fill[cell[o]]] = o
            fill[cell[o]] += 1
    return start, items, other, grid, max_rho


@njit(cache=True)
def _near_objects(start: np.ndarray, items: np.ndarray, other: np.ndarray, grid: np.ndarray, max_rho: float,
                  x0: float, y0: float, reach: float, n_o: int, near: np.ndarray) -> int:
    """Into ``near``, in index order, every moving object whose circle could come nearer than ``reach`` (m) to the
    origin (x0, y0) (the bins of :func:`_bin_objects` around it, padded for rounding, plus the objects left out of
    the bins); returns how many. A reach too long for the bins (or not finite) takes all ``n_o`` objects."""
    side = int(grid[4])
    pad = (reach + max_rho) * (1.0 + 1e-9) + 1e-9
    ax0 = (x0 - pad - grid[0]) * grid[2]
    ax1 = (x0 + pad - grid[0]) * grid[2]
    ay0 = (y0 - pad - grid[1]) * grid[3]
    ay1 = (y0 + pad - grid[1]) * grid[3]
    if not (abs(ax0) + abs(ax1) + abs(ay0) + abs(ay1) < 4.0 * side + 8.0):  # (the grid or more; NaN: all)
        for o in range(n_o):
            near[o] = o
        return n_o
    bx0, bx1 = min(max(int(math.floor(ax0)), 0), side - 1), min(max(int(math.floor(ax1)), 0), side - 1)
    by0, by1 = min(max(int(math.floor(ay0)), 0), side - 1), min(max(int(math.floor(ay1)), 0), side - 1)
    m = 0
    if ax1 >= 0.0 and ax0 <= side and ay1 >= 0.0 and ay0 <= side:
        for by in range(by0, by1 + 1):
            for bx in range(bx0, bx1 + 1):
                b = by * side + bx
                for j in range(start[b], start[b + 1]):
                    near[m] = items[j]
                    m += 1
    for j in range(other.shape[0]):
        near[m] = other[j]
        m += 1
    if m > 1:
        near[:m] = np.sort(near[:m])
    return m


@njit(cache=True)
def _grown(cand: np.ndarray, s0: np.ndarray, ns: np.ndarray, d: np.ndarray,
           cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The candidate arrays of :func:`cast_segments` copied into new ones of ``cap`` entries."""
    n = cand.shape[0]
    cand2 = np.empty(cap, dtype=np.int64)
    cand2[:n] = cand
    s02 = np.empty(cap, dtype=np.int64)
    s02[:n] = s0
    ns2 = np.empty(cap, dtype=np.int64)
    ns2[:n] = ns
    d2 = np.empty(cap)
    d2[:n] = d
    return cand2, s02, ns2, d2


@njit(cache=True)
def _bin(seg: np.ndarray, gx0: float, gy0: float, size: float, gnx: int, gny: int) -> tuple[np.ndarray, np.ndarray]:
    """Bucket offsets and items: each segment goes to every bucket its bounding box overlaps."""
    inv = 1.0 / size
    n = seg.shape[0]
    lo = np.empty((n, 2), dtype=np.int64)
    hi = np.empty((n, 2), dtype=np.int64)
    count = np.zeros(gnx * gny + 1, dtype=np.int64)
    for k in range(n):
        xa, xb = seg[k, 0], seg[k, 0] + seg[k, 2]
        ya, yb = seg[k, 1], seg[k, 1] + seg[k, 3]
        lo[k, 0] = min(max(int((min(xa, xb) - gx0) * inv), 0), gnx - 1)
        hi[k, 0] = min(max(int((max(xa, xb) - gx0) * inv), 0), gnx - 1)
        lo[k, 1] = min(max(int((min(ya, yb) - gy0) * inv), 0), gny - 1)
        hi[k, 1] = min(max(int((max(ya, yb) - gy0) * inv), 0), gny - 1)
        for iy in range(lo[k, 1], hi[k, 1] + 1):
            for ix in range(lo[k, 0], hi[k, 0] + 1):
                count[iy * gnx + ix + 1] += 1
    start = np.cumsum(count)
    fill = start[:-1].copy()
    items = np.empty(start[-1], dtype=np.int32)
    for k in range(n):
        for iy in range(lo[k, 1], hi[k, 1] + 1):
            for ix in range(lo[k, 0], hi[k, 0] + 1):
                b = iy * gnx + ix
                items[fill[b]] = k
                fill[b] += 1
    return start, items


@njit(cache=True, inline="always")
def _place_row(ax: float, ay: float, ex: float, ey: float, zmin: float, zmax: float, modes: float, pose: np.ndarray,
               z: np.ndarray, o: int, out: np.ndarray, j: int) -> None:
    """Row ``j`` of ``out``: the object-frame segment (start (ax, ay), edge (ex, ey), heights, modes) of object
    ``o`` in the world, at ``pose[o]`` (x, y m, yaw rad) and height ``z[o]`` (m)."""
    c, s = math.cos(pose[o, 2]), math.sin(pose[o, 2])
    out[j, 0] = pose[o, 0] + c * ax - s * ay
    out[j, 1] = pose[o, 1] + s * ax + c * ay
    out[j, 2] = c * ex - s * ey
    out[j, 3] = s * ex + c * ey
    out[j, 4] = z[o] + zmin
    out[j, 5] = z[o] + zmax
    out[j, 6] = modes


@njit(cache=True)
def place_objects(out_local: np.ndarray, out_obj: np.ndarray, out_slot: np.ndarray, box_local: np.ndarray,
                  box_obj: np.ndarray, box_slot: np.ndarray, box_yaw: np.ndarray, pose: np.ndarray, z: np.ndarray,
                  radius: np.ndarray, zr: np.ndarray, seg: np.ndarray, circle: np.ndarray, obj_z: np.ndarray) -> None:
    """Every moving object at its pose, in one pass: its outline rows and the four edges of each of its turning
    boxes (wheels) in the world, its bounding circle and height range.

    Args:
        out_local: (L, 7) outline rows in their objects' frames; out_obj, out_slot: (L,) each row's object and its
            row of ``seg``.
        box_local: (B, 7) boxes in their objects' frames: cx, cy (m), half length, half width (m), zmin, zmax (m),
            which rays see them (:data:`SEEN_2D`, ...); box_obj, box_slot: (B,) each box's object and its first row
            of ``seg`` (4 rows, counter-clockwise).
        box_yaw: (B,) each box's yaw in its object's frame (rad).
        pose: (O, 3) x, y (m), yaw (rad) of each object frame, world. z: (O,) height of each object frame (m).
        radius: (O,) bounding radius (m). zr: (O, 2) height range above the object's frame (m).
        seg: (S, 7) out: world rows. circle: (O, 3) out: bounding circles (cx, cy, radius; m). obj_z: (O, 2) out:
            world height ranges (m).
    """
    for k in range(out_local.shape[0]):
        _place_row(out_local[k, 0], out_local[k, 1], out_local[k, 2], out_local[k, 3], out_local[k, 4],
                   out_local[k, 5], out_local[k, 6], pose, z, out_obj[k], seg, out_slot[k])
    for b in range(box_local.shape[0]):
        c, s = math.cos(box_yaw[b]), math.sin(box_yaw[b])
        cx, cy, hl, hw = box_local[b, 0], box_local[b, 1], box_local[b, 2], box_local[b, 3]
        lx = (hl, hl, -hl, -hl)
        ly = (-hw, hw, hw, -hw)
        for i in range(4):
            j = (i + 1) % 4
            ax = cx + c * lx[i] - s * ly[i]
            ay = cy + s * lx[i] + c * ly[i]
            bx = cx + c * lx[j] - s * ly[j]
            by = cy + s * lx[j] + c * ly[j]
            _place_row(ax, ay, bx - ax, by - ay, box_local[b, 4], box_local[b, 5], box_local[b, 6], pose, z,
                       box_obj[b], seg, box_slot[b] + i)
    for o in range(circle.shape[0]):
        circle[o, 0] = pose[o, 0]
        circle[o, 1] = pose[o, 1]
        circle[o, 2] = radius[o]
        obj_z[o, 0] = zr[o, 0] + z[o]
        obj_z[o, 1] = zr[o, 1] + z[o]


# ---------------------------------------------------------------------------------------------------- sets
class StaticSegments:
    """Fixed segments binned into square buckets (to find those near a ray origin, :func:`cast_segments`).

    Attributes:
        seg: (S, 7) rows. start, items: bucket CSR (see :func:`cast_segments`). gx0, gy0: bucket-grid corner (m).
        size: bucket side (m). gnx, gny: buckets along x and y.
    """

    def __init__(self, seg: np.ndarray, bucket_size: float | None = None) -> None:
        """Bin ``seg`` ((S, 7) rows). ``bucket_size`` (m): None = √(extent area / S). Rows whose points are not
        finite are left out (they could not be hit, and would make the bucket grid's size NaN)."""
        seg = np.asarray(seg, dtype=np.float64).reshape(-1, SEG_COLS)
        finite = np.isfinite(seg[:, :4]).all(axis=1)
        self.seg = np.ascontiguousarray(seg if finite.all() else seg[finite])
        n = len(self.seg)
        if n == 0:
            self.gx0 = self.gy0 = 0.0
            self.size = 1.0
            self.gnx = self.gny = 1
            self.start = np.zeros(2, dtype=np.int64)
            self.items = np.zeros(0, dtype=np.int32)
            return
        xs = np.concatenate([self.seg[:, 0], self.seg[:, 0] + self.seg[:, 2]])
        ys = np.concatenate([self.seg[:, 1], self.seg[:, 1] + self.seg[:, 3]])
        x0, x1, y0, y1 = float(xs.min()), float(xs.max()), float(ys.min()), float(ys.max())
        w, h = max(x1 - x0, 1e-3), max(y1 - y0, 1e-3)
        if bucket_size is None:
            bucket_size = math.sqrt(w * h / n)
        size = max(float(bucket_size), w / MAX_BUCKETS_PER_AXIS, h / MAX_BUCKETS_PER_AXIS, 1e-3)
        self.gnx = int(w / size) + 1
        self.gny = int(h / size) + 1
        self.size = size
        self.gx0, self.gy0 = x0, y0
        self.start, self.items = _bin(self.seg, x0, y0, size, self.gnx, self.gny)


class MovingSegments:
    """Objects placed from their poses at each call: fixed outlines (object frame) plus boxes that turn (wheels).

    Build with :meth:`add_object` (one per object), then :meth:`finish`; each cast, :meth:`place` the objects, then
    :meth:`cast`.

    Attributes:
        n_objects: O. owner: (O,) vehicle index of each object (−1: none).
        seg: (S, 7) world rows after :meth:`place`; object o owns ``obj_start[o]:obj_start[o+1]``.
        circle: (O, 3) bounding circles after :meth:`place` (m). obj_z: (O, 2) height ranges after :meth:`place`.
    """

    def __init__(self) -> None:
        self._outline: list[np.ndarray] = []
        self._boxes: list[np.ndarray] = []
        self._owner: list[int] = []
        self._radius: list[float] = []
        self._zr: list[tuple[float, float]] = []

    def add_object(self, outline: np.ndarray, zmin: float, zmax: float, owner: int = NO_OWNER,
                   boxes: np.ndarray | None = None, modes: int = SEEN_BOTH) -> int:
        """Register an object; returns its index.

        Args:
            outline: (P, 2) polygon in the object frame (m).
            zmin, zmax: height range of the outline above the object's frame (m).
            owner: vehicle index (a ray from that vehicle's sensors ignores the object), or −1.
            boxes: (B, 6) turning boxes in the object frame — cx, cy (m), half length, half width (m), zmin, zmax
                (m above the object's frame) — seen by both kinds of rays, or (B, 7) with which rays see each as a
                7th column; their yaws are given to :meth:`place`.
            modes: which rays see the outline (:data:`SEEN_2D`, :data:`SEEN_3D` or both).
        """
        rows = polygon_edges(outline, zmin, zmax, modes)
        b = np.zeros((0, 7)) if boxes is None else np.asarray(boxes, dtype=np.float64)
        if b.ndim == 2 and b.shape[1] == 6:
            b = np.column_stack([b, np.full(len(b), float(SEEN_BOTH))])
        b = np.ascontiguousarray(b).reshape(-1, 7)
        pts = np.asarray(outline, dtype=np.float64).reshape(-1, 2)
        radius = float(np.hypot(pts[:, 0], pts[:, 1]).max()) if len(pts) else 0.0
        if len(b):
            radius = max(radius, float(np.max(np.hypot(b[:, 0], b[:, 1]) + np.hypot(b[:, 2], b[:, 3]))))
        zs = [zmin, zmax] + (list(b[:, 4]) + list(b[:, 5]) if len(b) else [])
        self._outline.append(rows)
        self._boxes.append(b)
        self._owner.append(int(owner))
        self._radius.append(radius * (1.0 + 1e-9) + 1e-9)
        self._zr.append((min(zs), max(zs)))
        return len(self._owner) - 1

    def finish(self) -> None:
        """Fix the layout: per object, its outline rows then 4 rows per box."""
        n = len(self._owner)
        self.n_objects = n
        self.owner = np.array(self._owner, dtype=np.int64)
        counts = [len(r) + 4 * len(b) for r, b in zip(self._outline, self._boxes, strict=True)]
        self.obj_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.seg = np.zeros((int(self.obj_start[-1]), SEG_COLS))
        # outline rows, their slots and objects
        self._out_local = np.vstack([np.zeros((0, SEG_COLS)), *self._outline])
        self._out_obj = np.concatenate([np.zeros(0, np.int64)] + [np.full(len(r), o, np.int64)
                                                                  for o, r in enumerate(self._outline)])
        self._out_slot = np.concatenate([np.zeros(0, np.int64)] + [self.obj_start[o] + np.arange(len(r))
                                                                   for o, r in enumerate(self._outline)])
        boxes = np.vstack([np.zeros((0, 7)), *self._boxes])
        self.n_boxes = len(boxes)
        self._box_local = boxes
        self._box_obj = np.concatenate([np.zeros(0, np.int64)] + [np.full(len(b), o, np.int64)
                                                                  for o, b in enumerate(self._boxes)])
        self._box_slot = np.concatenate(
            [np.zeros(0, np.int64)] + [self.obj_start[o] + len(self._outline[o]) + 4 * np.arange(len(b))
                                       for o, b in enumerate(self._boxes)]).astype(np.int64)
        self._radius_arr = np.array(self._radius, dtype=np.float64)
        self._zr_arr = np.array(self._zr, dtype=np.float64).reshape(-1, 2)
        self.circle = np.zeros((n, 3))
        self.obj_z = np.zeros((n, 2))

    def place(self, pose: np.ndarray, z: np.ndarray, box_yaw: np.ndarray | None = None) -> None:
        """Put every object at its pose (:func:`place_objects`).

        Args:
            pose: (O, 3) x, y (m), yaw (rad) of each object frame, world. z: (O,) height of each object frame (m).
            box_yaw: (number of boxes,) yaw of each box in its object's frame (rad), in registration order.
        """
        if self.n_objects == 0:
            return
        pose = np.ascontiguousarray(pose, dtype=np.float64).reshape(-1, 3)
        z = np.ascontiguousarray(z, dtype=np.float64)
        yaw = np.zeros(self.n_boxes) if box_yaw is None else np.ascontiguousarray(box_yaw, dtype=np.float64)
        place_objects(self._out_local, self._out_obj, self._out_slot, self._box_local, self._box_obj, self._box_slot,
                      yaw, pose, z, self._radius_arr, self._zr_arr, self.seg, self.circle, self.obj_z)


THREADED_RAYS = 16384
"""Casts of at least this many rays go to :func:`cast_segments_threaded` (when :mod:`mvsim_core.threads` allows more
than one thread): below it, handing the runs out costs more than the threads save."""

CHUNKS_PER_THREAD = 4
"""Pieces the runs are cut into per thread: a thread slowed by another process leaves its pieces to the others."""


def cast_sets(static: StaticSegments | None, moving: MovingSegments | None, ox: np.ndarray, oy: np.ndarray,
              dx: np.ndarray, dy: np.ndarray, height: np.ndarray, use_z: np.ndarray, visible: np.ndarray,
              exclude: np.ndarray, out: np.ndarray, n_sectors: int = N_SECTORS) -> None:
    """:func:`cast_segments` on a static set and placed moving objects (either may be None).

    Arrays as in :func:`cast_segments`: (R,) float64 ``ox, oy, dx, dy, height``, bool ``use_z, visible``, int64
    ``exclude``; ``out`` (R,) float64, reach in, nearest hit out (m).
    """
    st = static if static is not None else _EMPTY_STATIC
    mv = moving if moving is not None and moving.n_objects else _EMPTY_MOVING
    if len(st.seg) == 0 and mv.n_objects == 0:
        return
    args = (st.seg, st.start, st.items, st.gx0, st.gy0, st.size, st.gnx, st.gny, mv.seg, mv.obj_start, mv.circle,
            mv.obj_z, mv.owner, ox, oy, dx, dy, height, use_z, visible, exclude, out, n_sectors)
    if use_threads(len(ox), THREADED_RAYS):
        import numba

        with threaded() as n, numba.parallel_chunksize(1):  # (chunks handed out one by one: see rays3d)
            cast_segments_threaded(*args, CHUNKS_PER_THREAD * n)
    else:
        cast_segments(*args)


_EMPTY_STATIC = StaticSegments(np.zeros((0, SEG_COLS)))
_EMPTY_MOVING = MovingSegments()
_EMPTY_MOVING.finish()
