"""The viewer's status overlay: what it says (plain Python) and the RGBA image of the text (Pillow).

The overlay reads, top to bottom: simulated time and achieved real-time factor (with frames per second); the
selected vehicle, its controller, its body-frame twist (vx, vy in m/s, ω in °/s) and whether it touches anything now;
the teleop key help of its controller; and the last thing a key did. :func:`status_lines` builds the lines;
:class:`TextPanel` rasterizes them (cached: the picture is redrawn only when the text changes).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.errors import MvsimError

if TYPE_CHECKING:
    from mvsim_core.world import World

PANEL_FONT_SIZE = 14
"""Font size (px) of the overlay text."""
PANEL_MARGIN = 6
"""Padding (px) around the overlay text."""
PANEL_BACKGROUND = (0, 0, 0, 150)
"""RGBA of the panel behind the text (translucent black)."""
PANEL_TEXT = (255, 255, 255, 255)
"""RGBA of the text."""


def status_lines(world: World, teleop: Any, rtf: float | None, fps: float | None = None,
                 follow: str = "", ortho: bool = False) -> list[str]:
    """The overlay's lines for ``world`` with ``teleop``'s selected vehicle.

    Args:
        rtf: achieved real-time factor (simulated s per wall s), None before it is known.
        fps: frames drawn per wall second, None before it is known.
        follow: name of the vehicle the camera follows ("" for none). ortho: orthographic view.
    """
    head = f"t = {world.time:.2f} s"
    if rtf is not None:
        head += f" | real-time factor {rtf:.2f}"
    if fps is not None:
        head += f" | {fps:.0f} fps"
    view = ["ortho" if ortho else "perspective"] + ([f"following {follow}"] if follow else [])
    lines = [head + " | " + ", ".join(view)]
    veh = teleop.vehicle
    if veh is not None:
        vx, vy, w = veh.twist
        ctrl = getattr(veh.controller, "xml_class", type(veh.controller).__name__)
        n = len(world.vehicles)
        lines.append(f"vehicle {teleop.selected + 1}/{n}: {veh.name} [{ctrl}] vx={_fixed(vx, 2)} vy={_fixed(vy, 2)} "
                     f"m/s w={_fixed(math.degrees(w), 1)} deg/s | collision: {'YES' if veh.collision else 'no'}")
        lines.extend(teleop.help_lines())
        lines.append("mouse: left orbit, right pan, wheel zoom | f follow, o ortho, h hide this, Esc quit")
        if teleop.last_message:
            lines.append(teleop.last_message)
    else:
        lines.append("mouse: left orbit, right pan, wheel zoom | o ortho, h hide this, Esc quit")
    return lines


def _fixed(x: float, digits: int) -> str:
    """``x`` with ``digits`` decimals, never "-0.00" for a value that rounds to zero."""
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0.0 else text


class TextPanel:
    """Rasterizes overlay lines into an RGBA image (rows top first), redrawing only when the lines change."""

    def __init__(self, font_size: int = PANEL_FONT_SIZE) -> None:
        from PIL import ImageFont

        self.font = ImageFont.load_default(size=font_size)
        self._lines: list[str] | None = None
        self._image = np.zeros((0, 0, 4), dtype=np.uint8)
        self.version = 0
        """Increments whenever :meth:`image` returns a new picture (so a renderer knows when to re-upload)."""

    def image(self, lines: list[str]) -> np.ndarray:
        """(H, W, 4) uint8 picture of ``lines`` on the panel background (empty for no lines)."""
        if lines == self._lines:
            return self._image
        from PIL import Image, ImageDraw, ImageFont

        self._lines = list(lines)
        self.version += 1
        if not lines:
            self._image = np.zeros((0, 0, 4), dtype=np.uint8)
            return self._image
        probe = ImageDraw.Draw(Image.new("RGBA", (1, 1)))
        if not isinstance(self.font, ImageFont.FreeTypeFont):  # Pillow without FreeType: a bitmap font, no metrics
            raise MvsimError("the viewer's status panel needs Pillow built with FreeType (see python3 -m PIL.report)")
        ascent, descent = self.font.getmetrics()
        step = ascent + descent + 2  # from the font, not the text: the panel does not jitter as numbers change
        width = max(probe.textbbox((0, 0), line or " ", font=self.font)[2] for line in lines) + 2 * PANEL_MARGIN
        height = step * len(lines) + 2 * PANEL_MARGIN
        img = Image.new("RGBA", (int(width), int(height)), PANEL_BACKGROUND)
        draw = ImageDraw.Draw(img)
        for i, line in enumerate(lines):
            draw.text((PANEL_MARGIN, PANEL_MARGIN + i * step), line, font=self.font, fill=PANEL_TEXT)
        self._image = np.asarray(img, dtype=np.uint8)
        return self._image
