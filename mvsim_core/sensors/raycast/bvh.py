"""Triangle meshes for the 3D ray caster: one bounding-volume hierarchy (BVH) per mesh, all in shared flat arrays,
and the compiled query of a ray against one of them. The models of moving bodies use these trees; static models go to
Embree when it is installed (:mod:`.embree_meshes` says why).

A mesh is given in its owner's local frame (a block's or a vehicle's, m); the caster moves each ray into that frame
(:mod:`.solids`) and walks the mesh's tree there, so a moving body needs no rebuild. Meshes are seen from both sides
(as the cameras draw them, ``cull="none"``): a visual model is often an open surface or has inconsistent winding.

Build (:func:`build_bvh`): binned surface-area heuristic (:data:`N_BINS` bins along each axis of the centroids'
box), leaves of at most :data:`LEAF_SIZE` triangles; a node that cannot be split usefully (all centroids in one bin,
or a split that costs more than the leaf) stays a leaf up to :data:`MAX_LEAF` triangles, and is halved beyond that.

Arrays of a :class:`MeshBVHSet` (every mesh appended, indices absolute):

* ``node_box`` (N, 6) float64: x_lo, y_lo, z_lo, x_hi, y_hi, z_hi of each node's box (m, local);
* ``node_ref`` (N, 2) int64: (first child, 0) for an inner node, whose children are ``first`` and ``first + 1``;
  (first triangle, count) for a leaf;
* ``tri`` (T, 9) float64: each triangle as its first vertex and the two edges from it (v0, v1 − v0, v2 − v0; m).

Query (:func:`hit_bvh`): ordered depth-first walk with an explicit stack (the caller's array of
:data:`STACK_SIZE`, so that the per-ray kernels need no allocation), the nearer child first, every box and triangle
test bounded by the nearest hit so far; triangles by Möller–Trumbore.
"""

from __future__ import annotations

import math

import numpy as np

from mvsim_core.jit import njit

LEAF_SIZE = 4
"""Triangles below which a node is never split."""
MAX_LEAF = 16
"""Most triangles a leaf may hold when the heuristic finds no useful split (halved in index order beyond)."""
N_BINS = 12
"""Centroid bins per axis for the surface-area heuristic."""
STACK_SIZE = 128
"""Entries of a traversal stack: deeper than any tree :func:`build_bvh` makes (halving bounds the depth)."""
PARALLEL_EPS = 1e-14
"""|det| below which a ray counts as parallel to a triangle's plane (m², edges in m)."""


MAX_DEPTH = 96
"""Depth from which nodes are halved in index order whatever the heuristic says (keeps every tree shallower than
:data:`STACK_SIZE`)."""


@njit(cache=True, inline="always")
def _area_jit(dx: float, dy: float, dz: float) -> float:
    """Half the surface area of a box of sides dx, dy, dz (m²)."""
    return dx * dy + dy * dz + dz * dx


@njit(cache=True)
def _build(lo: np.ndarray, hi: np.ndarray, cent: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tree over triangles with boxes ``lo``/``hi`` (T, 3) and centroids ``cent`` (T, 3): node_box, node_ref
    (node 0 the root) and the triangle order (leaf ranges index into it)."""
    n = lo.shape[0]
    cap = max(2 * n, 1)
    box = np.empty((cap, 6))
    ref = np.zeros((cap, 2), dtype=np.int64)
    order = np.arange(n)
    ref[0, 0], ref[0, 1] = 0, n
    n_nodes = 1
    depth = np.zeros(cap, dtype=np.int64)
    stack = np.empty(cap, dtype=np.int64)
    stack[0] = 0
    sp = 1
    b_cnt = np.empty(N_BINS, dtype=np.int64)
    b_lo = np.empty((N_BINS, 3))
    b_hi = np.empty((N_BINS, 3))
    right_area = np.empty(N_BINS)
    right_cnt = np.empty(N_BINS, dtype=np.int64)
    while sp > 0:
        sp -= 1
        node = stack[sp]
        first, count = ref[node, 0], ref[node, 1]
        bl = np.full(3, np.inf)
        bh = np.full(3, -np.inf)
        cl = np.full(3, np.inf)
        ch = np.full(3, -np.inf)
        for i in range(first, first + count):
            t = order[i]
            for a in range(3):
                bl[a] = min(bl[a], lo[t, a])
                bh[a] = max(bh[a], hi[t, a])
                cl[a] = min(cl[a], cent[t, a])
                ch[a] = max(ch[a], cent[t, a])
        box[node, 0:3] = bl
        box[node, 3:6] = bh
        if count <= LEAF_SIZE or n == 0:
            continue
        best_cost = math.inf
        best_axis = -1
        best_split = 0
        for a in range(3):
            ext = ch[a] - cl[a]
            if not ext > 0.0:
                continue
            scale = N_BINS / ext
            b_cnt[:] = 0
            b_lo[:] = np.inf
            b_hi[:] = -np.inf
            for i in range(first, first + count):
                t = order[i]
                b = min(int((cent[t, a] - cl[a]) * scale), N_BINS - 1)
                b_cnt[b] += 1
                for c in range(3):
                    b_lo[b, c] = min(b_lo[b, c], lo[t, c])
                    b_hi[b, c] = max(b_hi[b, c], hi[t, c])
            rl = np.full(3, np.inf)
            rh = np.full(3, -np.inf)
            rc = 0
            for b in range(N_BINS - 1, 0, -1):
                rc += b_cnt[b]
                for c in range(3):
                    rl[c] = min(rl[c], b_lo[b, c])
                    rh[c] = max(rh[c], b_hi[b, c])
                right_cnt[b] = rc
                right_area[b] = _area_jit(rh[0] - rl[0], rh[1] - rl[1], rh[2] - rl[2]) if rc > 0 else 0.0
            ll = np.full(3, np.inf)
            lh = np.full(3, -np.inf)
            lc = 0
            for b in range(N_BINS - 1):
                lc += b_cnt[b]
                for c in range(3):
                    ll[c] = min(ll[c], b_lo[b, c])
                    lh[c] = max(lh[c], b_hi[b, c])
                if lc == 0 or right_cnt[b + 1] == 0:
                    continue
                cost = (lc * _area_jit(lh[0] - ll[0], lh[1] - ll[1], lh[2] - ll[2])
                        + right_cnt[b + 1] * right_area[b + 1])
                if cost < best_cost:
                    best_cost, best_axis, best_split = cost, a, b + 1
        leaf_cost = count * _area_jit(bh[0] - bl[0], bh[1] - bl[1], bh[2] - bl[2])
        if depth[node] >= MAX_DEPTH:
            n_left = count // 2
        elif best_axis < 0 or best_cost >= leaf_cost:
            if count <= MAX_LEAF:
                continue
            n_left = count // 2  # no useful split: halve in index order (bounds the depth)
        else:
            a = best_axis
            scale = N_BINS / (ch[a] - cl[a])
            i, j = first, first + count - 1
            while i <= j:
                t = order[i]
                if min(int((cent[t, a] - cl[a]) * scale), N_BINS - 1) < best_split:
                    i += 1
                else:
                    order[i], order[j] = order[j], order[i]
                    j -= 1
            n_left = i - first
        left = n_nodes
        n_nodes += 2
        ref[left, 0], ref[left, 1] = first, n_left
        ref[left + 1, 0], ref[left + 1, 1] = first + n_left, count - n_left
        ref[node, 0], ref[node, 1] = left, 0
        depth[left] = depth[left + 1] = depth[node] + 1
        stack[sp] = left
        stack[sp + 1] = left + 1
        sp += 2
    return box[:n_nodes].copy(), ref[:n_nodes].copy(), order


def build_bvh(triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BVH of (T, 3, 3) triangles (vertices in m, any frame): (node_box (N, 6), node_ref (N, 2), tri (T, 9)), node
    0 the root, indices relative to these arrays. Triangles with a non-finite vertex are dropped."""
    tris = np.asarray(triangles, dtype=np.float64).reshape(-1, 3, 3)
    tris = tris[np.isfinite(tris).all(axis=(1, 2))]
    lo = np.ascontiguousarray(tris.min(axis=1))
    hi = np.ascontiguousarray(tris.max(axis=1))
    box, ref, order = _build(lo, hi, np.ascontiguousarray(0.5 * (lo + hi)))
    t = tris[order]
    tri = np.concatenate([t[:, 0], t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]], axis=1)
    return box, ref, np.ascontiguousarray(tri)


class MeshBVHSet:
    """The trees of several meshes in shared arrays (see the module docstring); :meth:`add` returns a mesh's root.

    The same triangles added twice (e.g. many blocks with one model) share one tree: :meth:`add` takes a key.
    """

    def __init__(self) -> None:
        self._boxes: list[np.ndarray] = []
        self._refs: list[np.ndarray] = []
        self._tris: list[np.ndarray] = []
        self._n_nodes = 0
        self._n_tris = 0
        self._roots: dict[object, tuple[int, np.ndarray]] = {}
        self._frozen: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The joined arrays, joined once after the last :meth:`add`."""
        if self._frozen is None:
            self._frozen = (np.ascontiguousarray(np.vstack([np.zeros((0, 6)), *self._boxes])),
                            np.ascontiguousarray(np.vstack([np.zeros((0, 2), dtype=np.int64), *self._refs])),
                            np.ascontiguousarray(np.vstack([np.zeros((0, 9)), *self._tris])))
        return self._frozen

    @property
    def node_box(self) -> np.ndarray:
        """(N, 6) node boxes (m, each mesh's frame)."""
        return self._arrays()[0]

    @property
    def node_ref(self) -> np.ndarray:
        """(N, 2) int64 children / triangle ranges."""
        return self._arrays()[1]

    @property
    def tri(self) -> np.ndarray:
        """(T, 9) triangles: v0, v1 − v0, v2 − v0 (m)."""
        return self._arrays()[2]

    def add(self, triangles: np.ndarray, key: object = None) -> tuple[int, np.ndarray]:
        """Add a mesh of (T, 3, 3) triangles (m, its owner's frame): (root node index, its (6,) box x_lo, y_lo,
        z_lo, x_hi, y_hi, z_hi). With a ``key`` seen before, the tree of that call is returned instead."""
        if key is not None and key in self._roots:
            return self._roots[key]
        box, ref, tri = build_bvh(triangles)
        ref = ref.copy()
        inner = ref[:, 1] == 0
        ref[inner, 0] += self._n_nodes
        ref[~inner, 0] += self._n_tris
        root = self._n_nodes
        self._boxes.append(box)
        self._refs.append(ref)
        self._tris.append(tri)
        self._n_nodes += len(box)
        self._n_tris += len(tri)
        self._frozen = None
        out = (root, box[0].copy())
        if key is not None:
            self._roots[key] = out
        return out

    @property
    def n_triangles(self) -> int:
        """Triangles stored (each shared tree once)."""
        return self._n_tris


@njit(cache=True, inline="always", _nrt=False)
def _slab(box: np.ndarray, i: int, qx: float, qy: float, qz: float, ix: float, iy: float, iz: float,
          best: float) -> float:
    """Entry distance of the ray q + t·e (``ix`` = 1/ex …) into node i's box if it meets it in [0, best), else
    inf."""
    t1, t2 = (box[i, 0] - qx) * ix, (box[i, 3] - qx) * ix
    ta, tb = min(t1, t2), max(t1, t2)
    t1, t2 = (box[i, 1] - qy) * iy, (box[i, 4] - qy) * iy
    ta, tb = max(ta, min(t1, t2)), min(tb, max(t1, t2))
    t1, t2 = (box[i, 2] - qz) * iz, (box[i, 5] - qz) * iz
    ta, tb = max(ta, min(t1, t2)), min(tb, max(t1, t2))
    ta = max(ta, 0.0)
    if ta <= tb and ta < best:
        return ta
    return math.inf


@njit(cache=True, inline="always", _nrt=False)
def _inv(e: float) -> float:
    """1 / e, a huge number of e's sign for e = 0 (a slab the ray never crosses)."""
    if e != 0.0:
        return 1.0 / e
    return 1e300 if math.copysign(1.0, e) > 0.0 else -1e300


@njit(cache=True, _nrt=False)
def hit_bvh(node_box: np.ndarray, node_ref: np.ndarray, tri: np.ndarray, root: int, stack: np.ndarray, qx: float,
            qy: float, qz: float, ex: float, ey: float, ez: float, best: float) -> float:
    """Distance (m) along the ray q + t·e (the mesh's frame, e of unit length) to the nearest triangle of the tree
    at ``root``, for t in [0, best); inf if none. ``stack``: (:data:`STACK_SIZE`,) int64 scratch."""
    ix, iy, iz = _inv(ex), _inv(ey), _inv(ez)
    hit = math.inf
    if _slab(node_box, root, qx, qy, qz, ix, iy, iz, best) == math.inf:
        return hit
    sp = 0
    node = root
    while True:
        first, count = node_ref[node, 0], node_ref[node, 1]
        if count == 0:
            ta = _slab(node_box, first, qx, qy, qz, ix, iy, iz, best)
            tb = _slab(node_box, first + 1, qx, qy, qz, ix, iy, iz, best)
            if ta < math.inf and tb < math.inf:
                if tb < ta:
                    node = first + 1
                    stack[sp] = first
                else:
                    node = first
                    stack[sp] = first + 1
                sp += 1
                continue
            if ta < math.inf:
                node = first
                continue
            if tb < math.inf:
                node = first + 1
                continue
        else:
            for k in range(first, first + count):
                # Möller–Trumbore: q + t·e = v0 + u·e1 + v·e2
                e1x, e1y, e1z = tri[k, 3], tri[k, 4], tri[k, 5]
                e2x, e2y, e2z = tri[k, 6], tri[k, 7], tri[k, 8]
                px, py, pz = ey * e2z - ez * e2y, ez * e2x - ex * e2z, ex * e2y - ey * e2x
                det = e1x * px + e1y * py + e1z * pz
                if abs(det) < PARALLEL_EPS:
                    continue
                inv = 1.0 / det
                sx, sy, sz = qx - tri[k, 0], qy - tri[k, 1], qz - tri[k, 2]
                u = (sx * px + sy * py + sz * pz) * inv
                if u < 0.0 or u > 1.0:
                    continue
                cx, cy, cz = sy * e1z - sz * e1y, sz * e1x - sx * e1z, sx * e1y - sy * e1x
                v = (ex * cx + ey * cy + ez * cz) * inv
                if v < 0.0 or u + v > 1.0:
                    continue
                t = (e2x * cx + e2y * cy + e2z * cz) * inv
                if 0.0 <= t < best:
                    best = t
                    hit = t
        # next: pop a node still worth visiting
        found = False
        while sp > 0:
            sp -= 1
            node = stack[sp]
            if _slab(node_box, node, qx, qy, qz, ix, iy, iz, best) < math.inf:
                found = True
                break
        if not found:
            return hit
