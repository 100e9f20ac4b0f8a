"""OpenGL drawing of the viewer's overlays: coloured points and lines in the world, and a picture (the status panel)
in screen space. Imports OpenGL: used only when a window or a screenshot is drawn.

Conventions are those of :meth:`~mvsim_core.sensors.render.renderer.SceneRenderer.render_matrices`, whose
``overlay`` callback is where these are drawn: the framebuffer counts rows from the top (row 0 = top of the image),
world positions are given relative to the scene origin (m, float32), and the second colour attachment receives the
optical-frame depth like the scene does. Every method expects the painter's context to be current.
"""

from __future__ import annotations

import numpy as np

from mvsim_core.sensors.render.renderer import compile_program

PULL = 1e-3
"""Relative distance by which overlay points and lines are drawn nearer to the eye than they are (1 mm at 1 m)."""

_COLOURED_VS = """
#version 330 core
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec4 a_color;
uniform mat4 u_view;
uniform mat4 u_proj;
uniform vec3 u_pull;   // scales optical-frame coordinates: brings overlays a hair nearer than the surfaces they mark
out vec4 v_color;
out float v_depth;
void main() {
    vec4 q = u_view * vec4(a_pos, 1.0);
    q.xyz *= u_pull;
    v_color = a_color;
    v_depth = q.z;
    gl_Position = u_proj * q;
}
"""

_COLOURED_FS = """
#version 330 core
in vec4 v_color;
in float v_depth;
layout(location = 0) out vec4 o_color;
layout(location = 1) out float o_depth;
void main() {
    o_color = vec4(v_color.rgb, 1.0);
    o_depth = v_depth;
}
"""

_PICTURE_VS = """
#version 330 core
layout(location = 0) in vec2 a_px;   // pixel position, x right, y down from the top-left corner
layout(location = 1) in vec2 a_uv;
uniform vec2 u_size;                 // framebuffer size (px)
out vec2 v_uv;
void main() {
    v_uv = a_uv;
    gl_Position = vec4(2.0 * a_px.x / u_size.x - 1.0, 2.0 * a_px.y / u_size.y - 1.0, 0.0, 1.0);
}
"""

_PICTURE_FS = """
#version 330 core
in vec2 v_uv;
uniform sampler2D u_picture;
layout(location = 0) out vec4 o_color;
layout(location = 1) out float o_depth;
void main() {
    o_color = texture(u_picture, v_uv);
    o_depth = 0.0;
}
"""


class OverlayPainter:
    """Points, lines and a screen-space picture, drawn into the bound framebuffer (see the module docstring).
    Create it, use it and :meth:`close` it with the same context current."""

    def __init__(self) -> None:
        from OpenGL import GL

        self.GL = GL
        self._coloured = compile_program(GL, _COLOURED_VS, _COLOURED_FS)
        self._picture = compile_program(GL, _PICTURE_VS, _PICTURE_FS)
        self._loc = {"u_view": GL.glGetUniformLocation(self._coloured, "u_view"),
                     "u_proj": GL.glGetUniformLocation(self._coloured, "u_proj"),
                     "u_pull": GL.glGetUniformLocation(self._coloured, "u_pull"),
                     "u_size": GL.glGetUniformLocation(self._picture, "u_size"),
                     "u_picture": GL.glGetUniformLocation(self._picture, "u_picture")}
        self._vaos = [int(v) for v in np.atleast_1d(GL.glGenVertexArrays(2))]
        self._bufs = [int(b) for b in np.atleast_1d(GL.glGenBuffers(4))]
        # coloured primitives: positions (float32 × 3) and colours (uint8 × 4, normalized)
        GL.glBindVertexArray(self._vaos[0])
        for loc, buf, size, kind, norm in ((0, self._bufs[0], 3, GL.GL_FLOAT, False),
                                           (1, self._bufs[1], 4, GL.GL_UNSIGNED_BYTE, True)):
            GL.glBindBuffer(GL.GL_ARRAY_BUFFER, buf)
            GL.glBufferData(GL.GL_ARRAY_BUFFER, 16, None, GL.GL_STREAM_DRAW)
            GL.glEnableVertexAttribArray(loc)
            GL.glVertexAttribPointer(loc, size, kind, norm, 0, None)
        # the picture quad: pixel positions and texture coordinates
        GL.glBindVertexArray(self._vaos[1])
        for loc, buf in ((0, self._bufs[2]), (1, self._bufs[3])):
            GL.glBindBuffer(GL.GL_ARRAY_BUFFER, buf)
            GL.glBufferData(GL.GL_ARRAY_BUFFER, 32, None, GL.GL_STREAM_DRAW)
            GL.glEnableVertexAttribArray(loc)
            GL.glVertexAttribPointer(loc, 2, GL.GL_FLOAT, False, 0, None)
        GL.glBindVertexArray(0)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, 0)
        self._texture = int(GL.glGenTextures(1))
        self._texture_key: tuple[int, int, int] | None = None

    def primitives(self, kind: str, xyz: np.ndarray, rgba: np.ndarray, view: np.ndarray, proj: np.ndarray,
                   size: float = 1.0) -> None:
        """Draw ``kind`` ("points" or "lines": consecutive pairs) at ``xyz`` (N, 3) m relative to the scene origin,
        coloured ``rgba`` (N, 4) uint8, depth-tested against the scene; ``size`` px for points. Each vertex is drawn
        :data:`PULL` of its distance nearer to the eye, so that a lidar return shows on the surface it hit."""
        n = len(xyz)
        if n == 0:
            return
        GL = self.GL
        pos = np.ascontiguousarray(xyz, dtype=np.float32)
        col = np.ascontiguousarray(rgba, dtype=np.uint8)
        GL.glUseProgram(self._coloured)
        GL.glUniformMatrix4fv(self._loc["u_view"], 1, GL.GL_TRUE, view.astype(np.float32))
        GL.glUniformMatrix4fv(self._loc["u_proj"], 1, GL.GL_TRUE, proj.astype(np.float32))
        k = 1.0 - PULL
        if proj[3, 3] != 0.0:  # orthographic: nearer along the axis only (the pixel stays)
            GL.glUniform3f(self._loc["u_pull"], 1.0, 1.0, k)
        else:  # perspective: nearer along the line of sight (the pixel stays)
            GL.glUniform3f(self._loc["u_pull"], k, k, k)
        GL.glBindVertexArray(self._vaos[0])
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._bufs[0])
        GL.glBufferData(GL.GL_ARRAY_BUFFER, pos.nbytes, pos, GL.GL_STREAM_DRAW)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._bufs[1])
        GL.glBufferData(GL.GL_ARRAY_BUFFER, col.nbytes, col, GL.GL_STREAM_DRAW)
        if kind == "points":
            GL.glPointSize(max(1.0, float(size)))
            GL.glDrawArrays(GL.GL_POINTS, 0, n)
        else:
            GL.glDrawArrays(GL.GL_LINES, 0, n - n % 2)
        GL.glBindVertexArray(0)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, 0)
        GL.glUseProgram(0)

    def picture(self, rgba: np.ndarray, x: int, y: int, fb_width: int, fb_height: int, version: int = 0) -> None:
        """Blend ``rgba`` (H, W, 4) uint8, rows top first, with its top-left corner at pixel (x, y) of a
        ``fb_width`` × ``fb_height`` framebuffer, over everything (no depth test). ``version`` identifies the
        picture: the texture is uploaded again only when it or the size changes."""
        h, w = rgba.shape[:2]
        if h == 0 or w == 0:
            return
        GL = self.GL
        GL.glActiveTexture(GL.GL_TEXTURE0)
        GL.glBindTexture(GL.GL_TEXTURE_2D, self._texture)
        key = (version, w, h)
        if key != self._texture_key:
            GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
            GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, GL.GL_RGBA8, w, h, 0, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE,
                            np.ascontiguousarray(rgba, dtype=np.uint8))
            GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MIN_FILTER, GL.GL_NEAREST)
            GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MAG_FILTER, GL.GL_NEAREST)
            self._texture_key = key
        px = np.array([[x, y], [x + w, y], [x, y + h], [x + w, y + h]], dtype=np.float32)
        uv = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], dtype=np.float32)
        GL.glUseProgram(self._picture)
        GL.glUniform2f(self._loc["u_size"], float(fb_width), float(fb_height))
        GL.glUniform1i(self._loc["u_picture"], 0)
        GL.glBindVertexArray(self._vaos[1])
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._bufs[2])
        GL.glBufferData(GL.GL_ARRAY_BUFFER, px.nbytes, px, GL.GL_STREAM_DRAW)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._bufs[3])
        GL.glBufferData(GL.GL_ARRAY_BUFFER, uv.nbytes, uv, GL.GL_STREAM_DRAW)
        depth_on = GL.glIsEnabled(GL.GL_DEPTH_TEST)
        GL.glDisable(GL.GL_DEPTH_TEST)
        GL.glEnable(GL.GL_BLEND)
        GL.glBlendFunc(GL.GL_SRC_ALPHA, GL.GL_ONE_MINUS_SRC_ALPHA)
        GL.glDrawArrays(GL.GL_TRIANGLE_STRIP, 0, 4)
        GL.glDisable(GL.GL_BLEND)
        if depth_on:
            GL.glEnable(GL.GL_DEPTH_TEST)
        GL.glBindVertexArray(0)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, 0)
        GL.glBindTexture(GL.GL_TEXTURE_2D, 0)
        GL.glUseProgram(0)

    def close(self) -> None:
        """Free the GL objects (the painter's context must be current)."""
        GL = self.GL
        GL.glDeleteBuffers(len(self._bufs), self._bufs)
        GL.glDeleteVertexArrays(len(self._vaos), self._vaos)
        GL.glDeleteTextures([self._texture])
        GL.glDeleteProgram(self._coloured)
        GL.glDeleteProgram(self._picture)

