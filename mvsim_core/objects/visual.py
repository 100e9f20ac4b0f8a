"""``<visual>``: a 3D model drawn for an object (and, with ``<shape_from_visual/>``, its collision footprint).

Model files are resolved when the world loads: local paths relative to the file that names them, remote
``http(s)://`` URIs through the asset cache (:mod:`mvsim_core.io.remote_assets`). A model that cannot be had is
reported once in the world's missing assets; the object then falls back to its bounding box / prism.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mvsim_core.errors import AssetError
from mvsim_core.geometry.rotations import rotation
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param, read_params, table_names, warn_unknown_children

VISUAL_PARAMS: tuple[Param, ...] = (
    Param("model_uri", Kind.STRING, "", doc="local path, http(s):// URI or .../file.zip/inner/path"),
    Param("model_scale", Kind.FLOAT, 1.0, positive=True),
    Param("model_offset_x", Kind.FLOAT, 0.0, "m"),
    Param("model_offset_y", Kind.FLOAT, 0.0, "m"),
    Param("model_offset_z", Kind.FLOAT, 0.0, "m"),
    Param("model_yaw", Kind.ANGLE, 0.0, "rad"),
    Param("model_pitch", Kind.ANGLE, 0.0, "rad"),
    Param("model_roll", Kind.ANGLE, 0.0, "rad"),
    Param("show_bounding_box", Kind.BOOL, False),
    Param("model_cull_faces", Kind.STRING, "NONE"),
    Param("model_color", Kind.COLOR, (255, 255, 255, 255)),
    Param("model_split_size", Kind.FLOAT, 0.0, "m", min=0.0),
    Param("name", Kind.STRING, "group"),
)
_KNOWN = table_names(VISUAL_PARAMS)


@dataclass
class Visual:
    """One ``<visual>`` entry.

    The model file is located when the world loads but read only when something needs its geometry (bounds,
    ``<shape_from_visual/>``, the viewer), so that loading stays fast.

    Attributes:
        uri: the model URI as written (after substitution), "" for none.
        path: local file of the model, or None when missing/remote-unavailable.
        params: the table above (offsets in m, angles in rad).
        node: where it was written.
        written: the names of the parameters written in the file (the others are defaults): a ``model_color``
            written replaces the model's own material colours when drawn.
    """

    uri: str
    path: Path | None
    params: dict
    node: XmlNode
    written: frozenset[str] = frozenset()
    _bounds: np.ndarray | None = None
    _loaded: bool = False
    _mesh: Any = field(default=None, repr=False, compare=False)
    _mesh_base: Any = field(default=None, repr=False, compare=False)
    _mesh_key: bytes | None = field(default=None, repr=False, compare=False)

    @property
    def bounds(self) -> np.ndarray | None:
        """Model bounding box in the object frame after scale/offset/rotation (2×3, m), or None if unknown."""
        if not self._loaded:
            self._loaded = True
            try:
                mesh = self.mesh()
            except AssetError:
                mesh = None
            if mesh is not None and len(mesh.vertices):
                self._bounds = np.asarray(mesh.bounds, dtype=float)
        return self._bounds

    @property
    def enabled(self) -> bool:
        return bool(self.params.get("enabled", True))

    def transform(self) -> np.ndarray:
        """4×4 model-to-object transform (scale, then yaw-pitch-roll rotation, then offset)."""
        p = self.params
        rot = rotation(p["model_yaw"], p["model_pitch"], p["model_roll"])
        m = np.eye(4)
        m[:3, :3] = rot * p["model_scale"]
        m[:3, 3] = (p["model_offset_x"], p["model_offset_y"], p["model_offset_z"])
        return m

    def mesh(self):
        """The loaded mesh in the object frame (``mvsim_core.io.meshes.Mesh``), or None when unavailable."""
        if self.path is None:
            return None
        from mvsim_core.io.meshes import load_mesh

        base = load_mesh(self.path)
        m = self.transform()
        key = m.tobytes()
        if self._mesh_base is not base or self._mesh_key != key:  # the file changed or the parameters moved it
            self._mesh = base.transformed(m)
            self._mesh_base, self._mesh_key = base, key
        return self._mesh


def parse_visual(node: XmlNode, ctx: ParseContext, *, extra: dict[str, str] | None = None,
                 scale_override: float | None = None) -> Visual | None:
    """Read one ``<visual>`` node; returns None when ``enabled="false"``.

    Args:
        node: the ``<visual>`` element.
        ctx: parse context.
        extra: extra substitution variables (sensor NAME/PARENT_NAME).
        scale_override: a block's ``visual_scale`` (replaces ``model_scale`` when given and finite).
    """
    enabled_raw = ctx.attr(node, "enabled", "true", extra=extra)
    en = (enabled_raw or "true").strip().lower()
    if en not in ("true", "false", "1", "0"):
        raise ctx.error(node, f"bad bool '{enabled_raw}' for enabled=\"...\" of <visual>; expected true, false, "
                              f"1 or 0", attr="enabled")
    if en in ("false", "0"):
        return None
    warn_unknown_children(node, _KNOWN, ctx)
    pv = read_params(VISUAL_PARAMS, [node], ctx, extra=extra)
    params = dict(pv)
    if scale_override is not None and math.isfinite(scale_override):
        params["model_scale"] = scale_override
    uri = params["model_uri"]
    path: Path | None = None
    if uri:
        from mvsim_core.io.remote_assets import resolve_model_uri

        base = str(Path(node.file).resolve().parent)
        res = resolve_model_uri(uri, base)
        if res.local_path is None:
            ctx.missing_asset(uri, node, res.reason)
        else:
            path = Path(res.local_path)
    return Visual(uri=uri, path=path, params=params, node=node, written=frozenset(pv.where))


def parse_visuals(node: XmlNode, ctx: ParseContext, *, extra: dict[str, str] | None = None,
                  scale_override: float | None = None) -> list[Visual]:
    """All enabled ``<visual>`` children of ``node``."""
    out = []
    for c in node.children_named("visual"):
        v = parse_visual(c, ctx, extra=extra, scale_override=scale_override)
        if v is not None:
            out.append(v)
    return out
