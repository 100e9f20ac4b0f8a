"""Ray casting against 3D solids: prisms (blocks, walls, vertical-plane pieces, vehicle chassis), ramps, bumps and
wheels, each with a full 3D pose.

Every solid lives in its own *local frame*, placed in the world by a rotation R (local → world, MRPT's
``Rz(yaw)·Ry(pitch)·Rx(roll)``) and a translation T (m): ``p_world = R · p_local + T``. A ray is moved into the local
frame (``q = Rᵀ·(o − T)``, ``e = Rᵀ·d``), clipped to the solid's local axis-aligned box, then met with its shape:

* :data:`KIND_PRISM` — a polygon footprint (local x, y; any simple polygon, convex or not) extruded from z0 to z1:
  side walls (one per edge) plus the top and bottom caps;
* :data:`KIND_RAMP` — the wedge of a ``<geometry type="ramp">`` block: the box [0, lx] × [0, ly] × [z0, z1] cut by
  the plane z = lz · x / lx (the same top as :class:`~mvsim_core.dynamics.terrain.Terrain`);
* :data:`KIND_CYLINDER` — a box cut by an elliptic cylinder along local x, ((y − cy)/ay)² + ((z − cz)/az)² ≤ 1: a
  ``semi_cylinder_bump`` block (cy = cz = 0, ay = ly/2, az = lz, box z ≥ 0) and a vehicle wheel (axle along local x,
  radius r, centre at height r);
* :data:`KIND_MESH` — the triangles of a visual model (:mod:`.bvh`: a tree per model, in the local frame), seen from
  both sides; the local box is the model's box. Met by :func:`hit_mesh_solid` (it needs the trees).

Only surfaces met from the outside count: a ray that starts inside a solid does not see it (as the 2D lidar, and as
Box2D's ray cast). A polygon of (almost) zero area has no inside and is seen from both sides.

Table layout (:data:`SOLID_COLS` float64 columns per solid, see the ``C_*`` constants): kind, owner (vehicle index
whose sensors ignore the solid, −1 none), two-sided flag, intensity, R (row-major), T, local box, kind parameters,
first vertex and vertex count (prisms), and, refreshed with the pose: the bounding circle in the world x-y plane
(centre, radius) and the world height range. Vertices (local x, y) of all prisms are in one (V, 2) array, each polygon
counter-clockwise.
"""

from __future__ import annotations

import math

import numpy as np

from mvsim_core.geometry.polygons import signed_area
from mvsim_core.geometry.rotation_kernels import rotation_entries
from mvsim_core.jit import njit
from mvsim_core.sensors.raycast.bvh import hit_bvh

KIND_PRISM, KIND_RAMP, KIND_CYLINDER, KIND_MESH = 0, 1, 2, 3

C_KIND, C_OWNER, C_TWO_SIDED, C_INTENSITY = 0, 1, 2, 3
C_R = 4  # 9 values, row-major rotation local -> world
C_T = 13  # 3 values, world position of the local origin (m)
C_BOX = 16  # x0, x1, y0, y1, z0, z1 (m, local)
C_P = 22  # 4 kind parameters: ramp (lx, lz, -, -); cylinder (cy, cz, ay, az); mesh (root node of its tree, -, -, -)
C_V0, C_NV = 26, 27  # first vertex, vertex count (prisms)
C_CIRCLE = 28  # cx, cy, radius (m, world x-y)
C_ZLO, C_ZHI = 31, 32  # world height range (m)
SOLID_COLS = 33

NO_OWNER = -1
DEGENERATE_AREA = 1e-12  # m²: a polygon below this area is two-sided


def ccw_polygon(poly: np.ndarray) -> tuple[np.ndarray, bool]:
    """(P, 2) vertices in counter-clockwise order, and whether the polygon is degenerate (two-sided)."""
    p = np.asarray(poly, dtype=np.float64).reshape(-1, 2)
    area = signed_area(p)
    if area < 0.0:
        p = p[::-1]
    return np.ascontiguousarray(p), abs(area) < DEGENERATE_AREA


class SolidTable:
    """Rows of solids being collected (:meth:`add_prism`, :meth:`add_ramp`, :meth:`add_cylinder`), then frozen by
    :meth:`arrays` into the (N, :data:`SOLID_COLS`) table and the (V, 2) vertex array the kernels read.

    Each ``add_*`` takes the solid's world pose (x, y, z, yaw, pitch, roll) in m / rad; it can be changed later with
    :func:`place_solids`.
    """

    def __init__(self) -> None:
        self._rows: list[np.ndarray] = []
        self._verts: list[np.ndarray] = []
        self._nv = 0

    def __len__(self) -> int:
        return len(self._rows)

    def _row(self, kind: int, owner: int, intensity: float, box: tuple[float, ...],
             pose: tuple[float, ...]) -> np.ndarray:
        r = np.zeros(SOLID_COLS)
        r[C_KIND], r[C_OWNER], r[C_INTENSITY] = kind, owner, intensity
        r[C_BOX:C_BOX + 6] = box
        set_pose_row(r, np.asarray(pose, dtype=np.float64))
        self._rows.append(r)
        return r

    def add_prism(self, polygon: np.ndarray, z0: float, z1: float, pose: tuple[float, ...], *,
                  owner: int = NO_OWNER, intensity: float = 1.0) -> int:
        """A prism: ``polygon`` (P ≥ 3, local x, y in m, either orientation) from local height z0 to z1 (m)."""
        p, degenerate = ccw_polygon(polygon)
        box = (float(p[:, 0].min()), float(p[:, 0].max()), float(p[:, 1].min()), float(p[:, 1].max()),
               float(z0), float(z1))
        r = self._row(KIND_PRISM, owner, intensity, box, pose)
        r[C_TWO_SIDED] = 1.0 if degenerate else 0.0
        r[C_V0], r[C_NV] = self._nv, len(p)
        self._verts.append(p)
        self._nv += len(p)
        return len(self._rows) - 1

    def add_ramp(self, lx: float, ly: float, lz: float, z0: float, z1: float, pose: tuple[float, ...], *,
                 owner: int = NO_OWNER, intensity: float = 1.0) -> int:
        """A ramp: [0, lx] × [0, ly] × [z0, z1] (local, m) under the plane z = lz · x / lx."""
        r = self._row(KIND_RAMP, owner, intensity, (0.0, lx, 0.0, ly, z0, z1), pose)
        r[C_P], r[C_P + 1] = lx, lz
        return len(self._rows) - 1

    def add_cylinder(self, box: tuple[float, float, float, float, float, float], cy: float, cz: float, ay: float,
                     az: float, pose: tuple[float, ...], *, owner: int = NO_OWNER, intensity: float = 1.0) -> int:
        """The part of the local ``box`` (x0, x1, y0, y1, z0, z1; m) inside the elliptic cylinder along local x
        with centre (cy, cz) and semi-axes ay (along y), az (along z), m."""
        r = self._row(KIND_CYLINDER, owner, intensity, box, pose)
        r[C_P:C_P + 4] = cy, cz, ay, az
        return len(self._rows) - 1

    def add_mesh(self, root: int, box: np.ndarray, pose: tuple[float, ...], *, owner: int = NO_OWNER,
                 intensity: float = 1.0) -> int:
        """A triangle mesh: the tree at node ``root`` of a :class:`~.bvh.MeshBVHSet`, whose root box ``box``
        (x_lo, y_lo, z_lo, x_hi, y_hi, z_hi; m, local) becomes the solid's local box."""
        b = np.asarray(box, dtype=np.float64)
        r = self._row(KIND_MESH, owner, intensity, (b[0], b[3], b[1], b[4], b[2], b[5]), pose)
        r[C_TWO_SIDED] = 1.0
        r[C_P] = root
        return len(self._rows) - 1

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The (N, :data:`SOLID_COLS`) table and the (V, 2) vertices (fresh, contiguous copies)."""
        tab = np.vstack([np.zeros((0, SOLID_COLS)), *self._rows])
        verts = np.vstack([np.zeros((0, 2)), *self._verts])
        return np.ascontiguousarray(tab), np.ascontiguousarray(verts)


# ---------------------------------------------------------------------------------------------------- placement
@njit(cache=True)
def set_pose_row(row: np.ndarray, pose: np.ndarray) -> None:
    """Write pose (x, y, z, yaw, pitch, roll; m, rad) into a solid's row, with its bounding circle and height
    range."""
    _place(row, pose[0], pose[1], pose[2], pose[3], pose[4], pose[5], 0.0, 0.0, 0.0, 0.0)


@njit(cache=True, inline="always")
def _place(row: np.ndarray, x: float, y: float, z: float, yaw: float, pitch: float, roll: float, lx: float,
           ly: float, lz: float, lyaw: float) -> None:
    """Pose = (x, y, z, yaw, pitch, roll) ⊕ (lx, ly, lz, lyaw): a parent pose, then an offset and a turn about the
    parent's z axis (wheels on a vehicle)."""
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = rotation_entries(yaw, pitch, roll)
    tx = x + r00 * lx + r01 * ly + r02 * lz
    ty = y + r10 * lx + r11 * ly + r12 * lz
    tz = z + r20 * lx + r21 * ly + r22 * lz
    if lyaw != 0.0:  # R · Rz(lyaw)
        c, s = math.cos(lyaw), math.sin(lyaw)
        r00, r01 = r00 * c + r01 * s, r01 * c - r00 * s
        r10, r11 = r10 * c + r11 * s, r11 * c - r10 * s
        r20, r21 = r20 * c + r21 * s, r21 * c - r20 * s
    row[C_R + 0], row[C_R + 1], row[C_R + 2] = r00, r01, r02
    row[C_R + 3], row[C_R + 4], row[C_R + 5] = r10, r11, r12
    row[C_R + 6], row[C_R + 7], row[C_R + 8] = r20, r21, r22
    row[C_T], row[C_T + 1], row[C_T + 2] = tx, ty, tz
    # bounding sphere of the local box -> circle in x-y; exact height range of the box's corners
    bx0, bx1, by0, by1, bz0, bz1 = (row[C_BOX], row[C_BOX + 1], row[C_BOX + 2], row[C_BOX + 3], row[C_BOX + 4],
                                    row[C_BOX + 5])
    mx, my, mz = 0.5 * (bx0 + bx1), 0.5 * (by0 + by1), 0.5 * (bz0 + bz1)
    hx, hy, hz = 0.5 * (bx1 - bx0), 0.5 * (by1 - by0), 0.5 * (bz1 - bz0)
    row[C_CIRCLE] = tx + r00 * mx + r01 * my + r02 * mz
    row[C_CIRCLE + 1] = ty + r10 * mx + r11 * my + r12 * mz
    row[C_CIRCLE + 2] = math.sqrt(hx * hx + hy * hy + hz * hz) * (1.0 + 1e-9) + 1e-9
    cz = tz + r20 * mx + r21 * my + r22 * mz
    ez = abs(r20) * hx + abs(r21) * hy + abs(r22) * hz
    row[C_ZLO] = cz - ez - 1e-9
    row[C_ZHI] = cz + ez + 1e-9


@njit(cache=True)
def place_solids(tab: np.ndarray, rows: np.ndarray, parent: np.ndarray, parent_pose: np.ndarray,
                 offset: np.ndarray) -> None:
    """Move solids: ``tab[rows[i]]`` gets pose ``parent_pose[parent[i]] ⊕ offset[i]``.

    Args:
        tab: the solid table. rows: (K,) rows to move. parent: (K,) row of ``parent_pose`` of each.
        parent_pose: (Q, 6) x, y, z (m), yaw, pitch, roll (rad), world frame.
        offset: (K, 4) x, y, z (m) in the parent frame and a turn about the parent's z axis (rad).
    """
    for i in range(rows.shape[0]):
        p = parent[i]
        _place(tab[rows[i]], parent_pose[p, 0], parent_pose[p, 1], parent_pose[p, 2], parent_pose[p, 3],
               parent_pose[p, 4], parent_pose[p, 5], offset[i, 0], offset[i, 1], offset[i, 2], offset[i, 3])


# ---------------------------------------------------------------------------------------------------- kernels
@njit(cache=True, inline="always", _nrt=False)
def _inside_polygon(verts: np.ndarray, v0: int, nv: int, x: float, y: float) -> bool:
    """Even-odd test of (x, y) against polygon ``verts[v0:v0+nv]``."""
    inside = False
    j = v0 + nv - 1
    for i in range(v0, v0 + nv):
        yi, yj = verts[i, 1], verts[j, 1]
        if (yi > y) != (yj > y):
            xi, xj = verts[i, 0], verts[j, 0]
            if x < xi + (y - yi) * (xj - xi) / (yj - yi):
                inside = not inside
        j = i
    return inside


@njit(cache=True, inline="always", _nrt=False)
def _local_ray(row: np.ndarray, ox: float, oy: float, oz: float, dx: float, dy: float, dz: float,
               best: float) -> tuple[float, float, float, float, float, float, float, float]:
    """The world ray o + t·d in a solid's local frame, clipped to its local box: (qx, qy, qz, ex, ey, ez, ta, tb),
    the ray q + t·e inside the box for t in [ta, tb]; ta = inf when the ray misses the box (or its bounding circle)
    in [0, best)."""
    miss = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, math.inf, -math.inf)
    # cheap rejection on the bounding circle (x-y plane): the ray's x-y projection, o + t·(dx, dy), is within the
    # circle for t in [(along − √D) / h2, (along + √D) / h2]; no division
    wx, wy = row[C_CIRCLE] - ox, row[C_CIRCLE + 1] - oy
    rad = row[C_CIRCLE + 2]
    h2 = dx * dx + dy * dy
    along = wx * dx + wy * dy
    if h2 > 0.0:
        disc = along * along - h2 * (wx * wx + wy * wy - rad * rad)
        if disc < 0.0:
            return miss
        sq = math.sqrt(disc)
        if along + sq < 0.0 or along - sq >= best * h2:
            return miss
    elif wx * wx + wy * wy > rad * rad:  # a vertical ray: its x-y projection is the origin
        return miss
    # the ray in the local frame: q = Rᵀ (o − T), e = Rᵀ d
    px, py, pz = ox - row[C_T], oy - row[C_T + 1], oz - row[C_T + 2]
    qx = row[C_R] * px + row[C_R + 3] * py + row[C_R + 6] * pz
    qy = row[C_R + 1] * px + row[C_R + 4] * py + row[C_R + 7] * pz
    qz = row[C_R + 2] * px + row[C_R + 5] * py + row[C_R + 8] * pz
    ex = row[C_R] * dx + row[C_R + 3] * dy + row[C_R + 6] * dz
    ey = row[C_R + 1] * dx + row[C_R + 4] * dy + row[C_R + 7] * dz
    ez = row[C_R + 2] * dx + row[C_R + 5] * dy + row[C_R + 8] * dz
    x0, x1, y0, y1, z0, z1 = row[C_BOX], row[C_BOX + 1], row[C_BOX + 2], row[C_BOX + 3], row[C_BOX + 4], \
        row[C_BOX + 5]
    # slab clip: [ta, tb] = where the line is inside the local box
    ta, tb = -math.inf, math.inf
    if ex != 0.0:
        t1, t2 = (x0 - qx) / ex, (x1 - qx) / ex
        ta, tb = max(ta, min(t1, t2)), min(tb, max(t1, t2))
    elif qx < x0 or qx > x1:
        return miss
    if ey != 0.0:
        t1, t2 = (y0 - qy) / ey, (y1 - qy) / ey
        ta, tb = max(ta, min(t1, t2)), min(tb, max(t1, t2))
    elif qy < y0 or qy > y1:
        return miss
    if ez != 0.0:
        t1, t2 = (z0 - qz) / ez, (z1 - qz) / ez
        ta, tb = max(ta, min(t1, t2)), min(tb, max(t1, t2))
    elif qz < z0 or qz > z1:
        return miss
    if ta > tb or tb < 0.0 or ta >= best:
        return miss
    return qx, qy, qz, ex, ey, ez, ta, tb


@njit(cache=True, inline="always", _nrt=False)
def hit_mesh_solid(tab: np.ndarray, k: int, node_box: np.ndarray, node_ref: np.ndarray, tri: np.ndarray,
                   stack: np.ndarray, ox: float, oy: float, oz: float, dx: float, dy: float, dz: float,
                   best: float) -> float:
    """Distance (m) along the unit ray o + t·d (world) to the triangles of mesh solid ``k`` (:data:`KIND_MESH`,
    its tree in the :class:`~.bvh.MeshBVHSet` arrays ``node_box``, ``node_ref``, ``tri``) at t in [0, best), else
    inf; seen from both sides. ``stack``: scratch of :data:`~.bvh.STACK_SIZE` int64."""
    row = tab[k]
    qx, qy, qz, ex, ey, ez, ta, tb = _local_ray(row, ox, oy, oz, dx, dy, dz, best)
    if ta == math.inf:
        return math.inf
    return hit_bvh(node_box, node_ref, tri, int(row[C_P]), stack, qx, qy, qz, ex, ey, ez, best)


@njit(cache=True, inline="always", _nrt=False)
def hit_solid(tab: np.ndarray, verts: np.ndarray, k: int, ox: float, oy: float, oz: float, dx: float, dy: float,
              dz: float, best: float) -> float:
    """Distance (m) along the unit ray o + t·d (world) to solid ``k`` if met from the outside at t in [0, best),
    else inf. A mesh solid (:data:`KIND_MESH`) needs its trees: :func:`hit_mesh_solid`; here it is never met."""
    row = tab[k]
    if int(row[C_KIND]) == KIND_MESH:
        return math.inf
    qx, qy, qz, ex, ey, ez, ta, tb = _local_ray(row, ox, oy, oz, dx, dy, dz, best)
    if ta == math.inf:
        return math.inf
    kind = int(row[C_KIND])
    if kind == KIND_PRISM:
        return _hit_prism(row, verts, qx, qy, qz, ex, ey, ez, best)
    if kind == KIND_RAMP:
        # inside: lx·z − lz·x ≤ 0
        lx, lz = row[C_P], row[C_P + 1]
        c0 = lx * qz - lz * qx
        c1 = lx * ez - lz * ex
        if c1 > 0.0:
            tb = min(tb, -c0 / c1)
        elif c1 < 0.0:
            ta = max(ta, -c0 / c1)
        elif c0 > 0.0:
            return math.inf
    else:  # KIND_CYLINDER: ((y − cy)/ay)² + ((z − cz)/az)² ≤ 1
        cy, cz, ay, az = row[C_P], row[C_P + 1], row[C_P + 2], row[C_P + 3]
        uy, uz = (qy - cy) / ay, (qz - cz) / az
        vy, vz = ey / ay, ez / az
        a = vy * vy + vz * vz
        b = uy * vy + uz * vz
        c = uy * uy + uz * uz - 1.0
        if a > 0.0:
            disc = b * b - a * c
            if disc < 0.0:
                return math.inf
            sq = math.sqrt(disc)
            ta, tb = max(ta, (-b - sq) / a), min(tb, (-b + sq) / a)
        elif c > 0.0:
            return math.inf
    # convex solids: seen at the entry point, unless the ray starts inside
    if ta > tb or ta < 0.0 or ta >= best:
        return math.inf
    return ta


@njit(cache=True, inline="always", _nrt=False)
def _hit_prism(row: np.ndarray, verts: np.ndarray, qx: float, qy: float, qz: float, ex: float, ey: float,
               ez: float, best: float) -> float:
    """Nearest outside-facing surface of a prism along the local ray q + t·e, t in [0, best); inf if none."""
    z0, z1 = row[C_BOX + 4], row[C_BOX + 5]
    v0, nv = int(row[C_V0]), int(row[C_NV])
    two_sided = row[C_TWO_SIDED] != 0.0
    hit = math.inf
    # caps
    if ez < 0.0 and qz >= z1:
        t = (z1 - qz) / ez
        if t < best and _inside_polygon(verts, v0, nv, qx + t * ex, qy + t * ey):
            hit = t
            best = t
    elif ez > 0.0 and qz <= z0:
        t = (z0 - qz) / ez
        if t < best and _inside_polygon(verts, v0, nv, qx + t * ex, qy + t * ey):
            hit = t
            best = t
    # side walls: edge a -> b, counter-clockwise (outward normal on the right)
    j = v0 + nv - 1
    for i in range(v0, v0 + nv):
        ax, ay = verts[j, 0], verts[j, 1]
        sx, sy = verts[i, 0] - ax, verts[i, 1] - ay
        j = i
        den = ex * sy - ey * sx  # < 0: the wall faces the ray
        if den == 0.0 or (den > 0.0 and not two_sided):
            continue
        wx, wy = ax - qx, ay - qy
        t = (wx * sy - wy * sx) / den
        if t < 0.0 or t >= best:
            continue
        u = (wx * ey - wy * ex) / den
        if u < 0.0 or u > 1.0:
            continue
        z = qz + t * ez
        if z0 <= z <= z1:
            hit = t
            best = t
    return hit
