"""Pure-rendering looks of a world, as arrays (numpy and PIL only, no OpenGL): the skybox faces and the shadow map's
light matrix. :mod:`.renderer` uploads and uses them.

**Skybox.** The first ``<element class="skybox">`` whose six images are all available is drawn behind everything,
in the viewer and in camera images (depth images stay 0 there: nothing was hit). Face ↔ direction (world frame,
z up), each image seen from inside the box, its top edge up (for ``Up``/``Down``: its bottom/top edge towards +x).
Turning right from ``Front`` one meets ``Left``, then ``Back``, then ``Right`` (the edges of upstream's SunSet faces
match in that order, as in the usual six-sided skybox layouts):

=========  ==========  =========================================
face       direction   image right (s = 1) towards
=========  ==========  =========================================
Front      +x          −y
Back       −x          +y
Left       −y          −x
Right      +y          +x
Up         +z          −y (image bottom towards +x)
Down       −z          −y (image top towards +x)
=========  ==========  =========================================

Faces are resized to one square size (at most :data:`SKY_FACE_MAX` px) and stacked in :data:`SKY_LAYERS` order.

**Shadows** (``<lights><enable_shadows>``): a directional shadow map, ``shadow_map_size`` px square, made by an
orthographic view from the light. It is centred near the point the view looks at (the viewer's orbit target; for a
sensor camera, its optical centre): on the nearest point of a grid of :data:`SHADOW_SNAP` times the half-side, so that
the map of the parts that never move is redrawn only when the view crosses a grid step. It covers a square of half-side
``max(eye_distance_to_shadow_map_extension · d, minimum_shadow_map_extension_ratio · light_clip_plane_max)`` m, with
``d`` the eye–target distance (m; :data:`SENSOR_EYE_DISTANCE` for sensor cameras); depth runs from
``light_clip_plane_min`` to ``light_clip_plane_max`` m from a light "eye" placed ``light_clip_plane_max / 2`` m from
the centre towards the light. A fragment is shadowed where its light-space depth minus the bias
``shadow_bias + shadow_bias_cam2frag · (distance eye→fragment, m) + shadow_bias_normal · (1 − max(0, n·l))``
(bias in the map's [0, 1] depth units) is beyond the stored depth, averaged over 3 × 3 map texels; a shadowed face
keeps only its ambient light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.io.png_chunks import png_chunk_problem

if TYPE_CHECKING:
    from mvsim_core.world_model import WorldModel

SKY_LAYERS = ("Front", "Back", "Left", "Right", "Up", "Down")
"""Order of the skybox faces in the uploaded texture array (layer index = position)."""
SKY_FACE_MAX = 1024
"""Largest side (px) a skybox face is drawn with (bigger images are scaled down)."""
SENSOR_EYE_DISTANCE = 10.0
"""Eye–target distance (m) taken for sensor cameras when sizing the shadow map (they have no orbit target)."""


def skybox_faces(world: WorldModel) -> np.ndarray | None:
    """The faces of the world's first complete skybox as a (6, N, N, 4) uint8 array in :data:`SKY_LAYERS` order,
    row 0 of each = the *bottom* of its picture; None when the world has none (or an image cannot be read)."""
    from PIL import Image

    from mvsim_core.elements.skybox import SkyBox

    for el in getattr(world, "elements", []):
        if not isinstance(el, SkyBox) or not el.complete:
            continue
        try:
            images = []
            for face in SKY_LAYERS:
                path = el.faces[face]
                assert path is not None  # el.complete
                if png_chunk_problem(path) is not None:
                    raise ValueError("damaged PNG")
                with Image.open(path) as im:
                    images.append(im.convert("RGBA"))
        except Exception:  # PIL raises many kinds of errors for unreadable images
            continue
        n = min(SKY_FACE_MAX, max(max(im.size) for im in images))
        out = np.empty((6, n, n, 4), np.uint8)
        for i, im in enumerate(images):
            if im.size != (n, n):
                im = im.resize((n, n), Image.Resampling.BILINEAR)
            out[i] = np.asarray(im, dtype=np.uint8)[::-1]
        return out
    return None


SHADOW_SNAP = 0.125
"""Grid step of the shadow map's centre, as a fraction of the map's half-side (the view is always within
``SHADOW_SNAP / 2`` half-sides of the centre on each axis)."""


def shadow_center(point: Any, half: float) -> np.ndarray:
    """(3,) the shadow map's centre for a view looking at ``point`` (m, world minus origin): the nearest point of the
    grid of step ``SHADOW_SNAP · half`` (m)."""
    step = SHADOW_SNAP * float(half)
    p = np.asarray(point, dtype=np.float64)
    return np.round(p / step) * step if step > 0 else p


def shadow_extension(lights: Any, eye_distance: float) -> float:
    """Half-side (m) of the square the shadow map covers for an eye ``eye_distance`` m from its target."""
    return max(float(lights["eye_distance_to_shadow_map_extension"]) * float(eye_distance),
               float(lights["minimum_shadow_map_extension_ratio"]) * float(lights["light_clip_plane_max"]))


def light_matrix(direction: Any, center: Any, half: float, near: float, far: float) -> np.ndarray:
    """4×4 matrix from (world − origin) coordinates to the shadow map's clip space (OpenGL, depth −1..1).

    Args:
        direction: (3,) unit vector towards the light (world). center: (3,) centre of the covered square, in the same
            coordinates as the vertices (world minus the scene origin, m). half: half-side of the square (m).
        near, far: depth range (m) from the light eye, which sits ``far / 2`` m from ``center`` towards the light.
    """
    lz = np.asarray(direction, dtype=np.float64)
    lz = lz / np.linalg.norm(lz)
    up = np.array([0.0, 0.0, 1.0]) if abs(lz[2]) < 0.999 else np.array([1.0, 0.0, 0.0])
    lx = np.cross(up, lz)
    lx /= np.linalg.norm(lx)
    ly = np.cross(lz, lx)
    eye = np.asarray(center, dtype=np.float64) + lz * (0.5 * far)
    view = np.eye(4)
    view[0, :3], view[1, :3], view[2, :3] = lx, ly, lz
    view[:3, 3] = -view[:3, :3] @ eye
    proj = np.zeros((4, 4))
    proj[0, 0] = proj[1, 1] = 1.0 / half
    proj[2, 2] = -2.0 / (far - near)
    proj[2, 3] = -(far + near) / (far - near)
    proj[3, 3] = 1.0
    return proj @ view
