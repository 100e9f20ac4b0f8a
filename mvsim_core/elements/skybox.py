"""``<element class="skybox">``: six background images around the camera (drawn only).

``<textures>`` is a URI pattern with one ``%s``, replaced by each face name (:data:`FACES`) to get the six images.
Images that cannot be had are reported once as a missing asset (the pattern is named); the sky is then plain.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from mvsim_core.elements.base import WorldElement, child_node
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param

FACES = ("Front", "Back", "Down", "Up", "Left", "Right")
"""Face names substituted for ``%s``, in upstream's order."""


class SkyBox(WorldElement):
    """A skybox.

    Attributes:
        faces: face name -> local image file, or None where unavailable.
    """

    xml_class: ClassVar[str] = "skybox"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("textures", Kind.STRING, "", doc="URI pattern with one %s for the face name"),
    )

    faces: dict[str, Path | None]

    def _load(self, ctx: ParseContext) -> None:
        from mvsim_core.io.remote_assets import resolve_model_uri

        pattern = self.params.textures
        node = child_node(self, "textures")
        if not pattern:
            raise ctx.error(node, "skybox needs a <textures> URI pattern, e.g. "
                                  "https://.../SunSet.zip/SunSet/SunSet%s.jpg")
        if pattern.count("%s") != 1:
            raise ctx.error(node, f"<textures> must contain exactly one '%s' (replaced by {', '.join(FACES)}); "
                                  f"got '{pattern}'")
        base = str(Path(node.file).resolve().parent) if node.file and not node.file.startswith("<") else "."
        self.faces = {}
        for face in FACES:
            res = resolve_model_uri(pattern.replace("%s", face), base)
            self.faces[face] = Path(res.local_path) if res.local_path is not None else None
            if res.local_path is None:
                ctx.missing_asset(pattern, node, res.reason)

    @property
    def complete(self) -> bool:
        """Whether all six images are available."""
        return all(p is not None for p in self.faces.values())

    def summary(self) -> str:
        have = sum(p is not None for p in self.faces.values())
        return f"skybox {self.params.textures} ({have}/6 images available)"
