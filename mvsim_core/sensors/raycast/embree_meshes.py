"""Static mesh models through Intel Embree: the triangles of every static block seen as its visual models, in one
Embree scene, and the rays of a cast against it in one call.

Why two engines. Both ray engines were measured on the same rays (a VLP-16 sweep, 28 800 rays, among 80 chair models,
219 840 triangles, one core): Embree (the ``embreex`` wheel) took 2.7–3.1 ms per sweep, our numba tree
(:mod:`.bvh`) 5.5–5.9 ms (4.7 ms with a tuned node layout that was tried and not kept); the whole 3D-lidar path of
``benchmarks/bench_sensors.py`` (part ``lidar3d_meshes``) went from 110–117 to 213 sweeps/s. Embree is the faster
one, so static models go to it. The ``embreex`` binding has no
instancing and no vertex updates, so a model that moves (a vehicle chassis, a dynamic or animated block) would need a
new Embree scene at every cast; those stay in :mod:`.bvh`, whose trees live in the body's frame and never need a
rebuild. Where the wheel is missing (a platform without one) or ``MVSIM_MESH_ENGINE=numba`` is set, static models go
to :mod:`.bvh` as well; the two engines agree to float32 precision (tested).

Frames and precision: triangles are stored in float32 relative to :attr:`EmbreeMeshes.origin` (the centre of their
box, m, world), so that a world far from its origin keeps sub-millimetre precision; rays are moved there before the
cast. Distances are float32 (about 6e-8 relative: 5 µm at 80 m). Triangles are seen from both sides, as
:mod:`.bvh` and the cameras see them.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from mvsim_core.jit import njit

ENGINE_ENV = "MVSIM_MESH_ENGINE"
"""Environment variable choosing the engine of static mesh models: ``embree`` (the default when the wheel loads) or
``numba``."""


def _embreex() -> tuple[Any, Any] | None:
    """The ``embreex`` scene and mesh modules, or None when the wheel is not installed or does not load."""
    try:
        from embreex import mesh_construction, rtcore_scene
    except (ImportError, OSError):
        return None
    return rtcore_scene, mesh_construction


def use_embree() -> bool:
    """Whether static mesh models go to Embree: the wheel loads and :data:`ENGINE_ENV` does not say ``numba``."""
    return os.environ.get(ENGINE_ENV, "embree").strip().lower() != "numba" and _embreex() is not None


class EmbreeMeshes:
    """Static triangle meshes in one Embree scene (one geometry; a hit's triangle tells its mesh).

    Args:
        meshes: per mesh, its vertices (V, 3) (m, world frame) and triangles (T, 3) (vertex indices).
        intensity: (len(meshes),) the intensity each mesh returns (0..1).
        intangible: the meshes are intangible blocks' (seen by 3D rays, not by a 2D lidar's ``raytrace_3d`` rays).
    """

    def __init__(self, meshes: list[tuple[np.ndarray, np.ndarray]], intensity: list[float], *,
                 intangible: bool = False) -> None:
        self.intangible = intangible
        mods = _embreex()
        if mods is None:
            raise RuntimeError("embreex is not installed")
        rtcore_scene, mesh_construction = mods
        verts, faces, face_inten = [], [], []
        base = 0
        for (v, f), inten in zip(meshes, intensity, strict=True):
            v = np.asarray(v, dtype=np.float64).reshape(-1, 3)
            f = np.asarray(f, dtype=np.int64).reshape(-1, 3)
            finite = np.asarray(np.isfinite(v).all(axis=1), dtype=bool)
            f = f[finite[f].all(axis=1)]  # triangles with a non-finite corner are dropped
            verts.append(v)
            faces.append(f + base)
            face_inten.append(np.full(len(f), inten, dtype=np.float32))
            base += len(v)
        v = np.concatenate(verts) if verts else np.zeros((0, 3))
        f = np.concatenate(faces) if faces else np.zeros((0, 3), dtype=np.int64)
        used = v[np.unique(f)] if len(f) else np.zeros((0, 3))
        self.origin = 0.5 * (used.min(axis=0) + used.max(axis=0)) if len(used) else np.zeros(3)
        """Point the triangles are stored relative to (m, world)."""
        self.n_triangles = len(f)
        """Triangles in the scene."""
        self.face_intensity = np.concatenate(face_inten) if face_inten else np.zeros(0, dtype=np.float32)
        """(T,) intensity of each triangle, in Embree's order."""
        self._scene = None
        if len(f):
            self._scene = rtcore_scene.EmbreeScene()
            v32 = np.ascontiguousarray(np.where(np.isfinite(v), v - self.origin, 0.0), dtype=np.float32)
            mesh_construction.TriangleMesh(self._scene, v32, np.ascontiguousarray(f, dtype=np.int32))

    def cast(self, origins: np.ndarray, dirs: np.ndarray, reach: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Nearest triangle along each ray.

        Args:
            origins: (N, 3) ray origins (m, world). dirs: (N, 3) unit directions (world).
            reach: (N,) farthest distance looked at (m).

        Returns:
            (N,) float64 distance (m), inf where no triangle lies within reach; (N,) float32 intensity (0: none).
        """
        n = len(dirs)
        o32 = np.empty((n, 3), dtype=np.float32)
        d32 = np.empty((n, 3), dtype=np.float32)
        far32 = np.empty(n, dtype=np.float32)
        embree_rays_of(np.asarray(origins, dtype=np.float64).reshape(-1, 3),
                       np.asarray(dirs, dtype=np.float64).reshape(-1, 3), np.asarray(reach, dtype=np.float64),
                       self.origin, o32, d32, far32)
        return self.cast_prepared(o32, d32, far32)

    def cast_prepared(self, o32: np.ndarray, d32: np.ndarray, far32: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`cast` with the rays already in Embree's form (:func:`embree_rays_of`, :func:`embree_sensor_rays`):
        float32 origins relative to :attr:`origin`, directions, and reaches (0 for a ray that must miss)."""
        n = len(d32)
        if self._scene is None or n == 0:
            return np.full(n, np.inf), np.zeros(n, dtype=np.float32)
        res = self._scene.run(o32, d32, dists=far32, output=1)
        prim = res["primID"]
        hit = res["geomID"] >= 0
        t = np.where(hit, res["tfar"], np.inf)
        inten = np.where(hit, self.face_intensity[np.maximum(prim, 0)], 0.0)
        return t.astype(np.float64), inten.astype(np.float32)


@njit(cache=True)
def embree_rays_of(origins: np.ndarray, dirs: np.ndarray, reach: np.ndarray, shift: np.ndarray, o32: np.ndarray,
                   d32: np.ndarray, far32: np.ndarray) -> None:
    """Rays in Embree's form: ``o32`` = origins − ``shift``, ``d32`` = dirs, ``far32`` = reach (float32; m); a ray
    with a non-finite value or no reach gets reach 0 (it misses) and harmless finite values."""
    for r in range(dirs.shape[0]):
        _put(r, origins[r, 0] - shift[0], origins[r, 1] - shift[1], origins[r, 2] - shift[2], dirs[r, 0], dirs[r, 1],
             dirs[r, 2], reach[r], o32, d32, far32)


@njit(cache=True)
def embree_sensor_rays(origin: np.ndarray, rot: np.ndarray, dir_start: np.ndarray, dirs: np.ndarray,
                       reach: np.ndarray, shift: np.ndarray, o32: np.ndarray, d32: np.ndarray,
                       far32: np.ndarray) -> None:
    """The rays of S sensors in Embree's form (see :func:`embree_rays_of`): sensor s at ``origin[s]`` (m, world)
    with rotation ``rot[s]`` (sensor to world) owns the sensor-frame directions ``dirs[dir_start[s]:dir_start[s+1]]``
    and reaches ``reach[s]`` m."""
    for s in range(origin.shape[0]):
        ox, oy, oz = origin[s, 0] - shift[0], origin[s, 1] - shift[1], origin[s, 2] - shift[2]
        for r in range(dir_start[s], dir_start[s + 1]):
            a, b, c = dirs[r, 0], dirs[r, 1], dirs[r, 2]
            _put(r, ox, oy, oz, rot[s, 0, 0] * a + rot[s, 0, 1] * b + rot[s, 0, 2] * c,
                 rot[s, 1, 0] * a + rot[s, 1, 1] * b + rot[s, 1, 2] * c,
                 rot[s, 2, 0] * a + rot[s, 2, 1] * b + rot[s, 2, 2] * c, reach[s], o32, d32, far32)


@njit(cache=True, inline="always")
def _put(r: int, ox: float, oy: float, oz: float, dx: float, dy: float, dz: float, reach: float, o32: np.ndarray,
         d32: np.ndarray, far32: np.ndarray) -> None:
    """Write ray r (see :func:`embree_rays_of`)."""
    ok = reach > 0.0
    for v in (ox, oy, oz, dx, dy, dz, reach):
        ok = ok and math.isfinite(v)
    if not ok:
        ox, oy, oz, dx, dy, dz, reach = 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0
    o32[r, 0], o32[r, 1], o32[r, 2] = ox, oy, oz
    d32[r, 0], d32[r, 1], d32[r, 2] = dx, dy, dz
    far32[r] = min(reach, 3e38)
