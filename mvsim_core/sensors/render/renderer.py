"""Offscreen rendering of a :class:`~.scene_geometry.SceneGeometry`: colour and exact depth images of pinhole cameras
(and, through :meth:`SceneRenderer.render_matrices` and :meth:`SceneRenderer.present`, the desktop viewer's frames).

Importing this module imports OpenGL (through :func:`~.gl_context.get_context`, which picks the platform first); it
is imported only when a camera renders.

How a frame is made:

* the packed scene is uploaded once (one vertex buffer, one index buffer, the textures); at every frame only the node
  poses change: :meth:`SceneRenderer.update_nodes` writes them (3 × 4 floats per node) to a texture buffer that the
  vertex shader reads, so vehicles, wheels, blocks and actors move without touching vertex data;
* the camera renders into a framebuffer object with two colour attachments — RGBA8 colour and R32F *depth along the
  optical axis* (the optical-frame Z of each fragment, interpolated perspective-correctly, i.e. exact up to float32
  rounding; 0 where nothing was drawn) — and a 32-bit float depth buffer that only orders surfaces (reversed Z when
  ``glClipControl`` exists, so precision does not fall off with distance);
* ``glReadPixels`` reads the attachments; the projection already flips rows (:mod:`.camera_model`), so row 0 is the
  top of the image.

Lighting (no specular): one directional light from the world's ``<lights>`` — direction from
``light_azimuth_deg`` (from +x towards +y) and ``light_elevation_deg`` (above the horizon), colour ``light_color``,
``light_ambient`` a — and a face of base colour c and unit normal n (turned towards the camera for double-sided
surfaces) is drawn as ``c · light_color · min(1, a + (1 − a) · max(0, n·l))``. A face looking straight at the light
shows its own colour; with ``<light_ambient>1</light_ambient>`` every face shows its own colour exactly. Lines and
points are unlit. Textures multiply the vertex colour (white on textured parts). Colours are plain 8-bit (no gamma);
alpha is ignored (everything is opaque); no anti-aliasing, so a pixel shows the surface under its centre. Lines are
1 px wide (core-profile OpenGL has no wide lines); points take their element's size. Where nothing is drawn the
colour image shows :data:`BACKGROUND`, or the world's skybox when it has one. With ``<lights><enable_shadows>``
(upstream's default) a shadow map is rendered first and faces hidden from the light keep only their ambient light;
skybox and shadow details (face directions, shadow-map extent and biases): :mod:`.looks`.
"""

from __future__ import annotations

import ctypes
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.sensors.render.camera_model import Intrinsics, projection_matrix, view_matrix
from mvsim_core.sensors.render.frustum import boxes_in_view, draw_runs
from mvsim_core.sensors.render.gl_context import GLContext, RenderUnavailableError, get_context
from mvsim_core.sensors.render.looks import (
    SENSOR_EYE_DISTANCE,
    light_matrix,
    shadow_center,
    shadow_extension,
    skybox_faces,
)
from mvsim_core.sensors.render.mesh_primitives import TextureImage
from mvsim_core.sensors.render.scene_geometry import PackedScene, SceneGeometry

if TYPE_CHECKING:
    from mvsim_core.sensors.scheduler import SensorContext
    from mvsim_core.world_model import WorldModel

BACKGROUND: tuple[int, int, int] = (153, 153, 153)
"""Colour (RGB 0..255) of pixels that see nothing (MRPT's default viewport background, 0.6 grey)."""

_NODE_POSITION = """
    int base = 3 * int(a_node + 0.5);
    vec4 r0 = texelFetch(u_nodes, base);
    vec4 r1 = texelFetch(u_nodes, base + 1);
    vec4 r2 = texelFetch(u_nodes, base + 2);
    vec3 p = vec3(dot(r0.xyz, a_pos) + r0.w, dot(r1.xyz, a_pos) + r1.w, dot(r2.xyz, a_pos) + r2.w);
"""
"""GLSL lines of both vertex shaders: the vertex's node rows ``r0..r2`` (``[R | t]``) and its position ``p`` (world
minus the scene origin, m)."""

_VERTEX_SHADER = """
#version 330 core
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec4 a_color;
layout(location = 3) in vec2 a_uv;
layout(location = 4) in float a_node;
uniform samplerBuffer u_nodes;   // 3 texels per node: the rows of [R | t]
uniform mat4 u_view;             // world (minus origin) -> optical frame
uniform mat4 u_proj;             // optical frame -> clip space
out vec3 v_normal;
out vec4 v_color;
out vec2 v_uv;
out float v_depth;
out vec3 v_world;
void main() {""" + _NODE_POSITION + """\
    v_normal = vec3(dot(r0.xyz, a_normal), dot(r1.xyz, a_normal), dot(r2.xyz, a_normal));
    v_color = a_color;
    v_uv = a_uv;
    v_world = p;
    vec4 q = u_view * vec4(p, 1.0);
    v_depth = q.z;
    gl_Position = u_proj * q;
}
"""

_FRAGMENT_SHADER = """
#version 330 core
in vec3 v_normal;
in vec4 v_color;
in vec2 v_uv;
in float v_depth;
in vec3 v_world;
uniform sampler2D u_texture;
uniform int u_textured;
uniform int u_lit;
uniform vec3 u_light_dir;     // unit vector towards the light, world frame
uniform vec3 u_light_color;   // 0..1
uniform float u_ambient;
uniform int u_shadows;        // 1: look the fragment up in the shadow map
uniform sampler2D u_shadow_map;
uniform mat4 u_light_mat;     // world minus origin -> the shadow map's clip space
uniform vec3 u_eye;           // the eye, world minus origin (m)
uniform vec3 u_bias;          // shadow_bias, shadow_bias_cam2frag (per m), shadow_bias_normal
layout(location = 0) out vec4 o_color;
layout(location = 1) out float o_depth;
float shadowed(vec3 n) {      // fraction (0..1) of the 3x3 map texels around the fragment that hide it from the light
    vec4 s = u_light_mat * vec4(v_world, 1.0);
    vec3 c = s.xyz / s.w * 0.5 + 0.5;
    if (c.x < 0.0 || c.x > 1.0 || c.y < 0.0 || c.y > 1.0 || c.z > 1.0) return 0.0;
    float bias = u_bias.x + u_bias.y * distance(u_eye, v_world) + u_bias.z * (1.0 - max(0.0, dot(n, u_light_dir)));
    vec2 texel = 1.0 / vec2(textureSize(u_shadow_map, 0));
    float hidden = 0.0;
    for (int i = -1; i <= 1; ++i)
        for (int j = -1; j <= 1; ++j)
            hidden += (c.z - bias > texture(u_shadow_map, c.xy + vec2(i, j) * texel).r) ? 1.0 : 0.0;
    return hidden / 9.0;
}
void main() {
    vec4 c = v_color;
    if (u_textured == 1) c *= texture(u_texture, v_uv);
    vec3 rgb = c.rgb;
    if (u_lit == 1) {
        float len = length(v_normal);
        float k = 1.0;
        if (len > 0.0) {
            vec3 n = v_normal / len;
            if (!gl_FrontFacing) n = -n;
            float diffuse = max(0.0, dot(n, u_light_dir));
            if (u_shadows == 1 && diffuse > 0.0) diffuse *= 1.0 - shadowed(n);
            k = min(1.0, u_ambient + (1.0 - u_ambient) * diffuse);
        }
        rgb = rgb * k * u_light_color;
    }
    o_color = vec4(clamp(rgb, 0.0, 1.0), 1.0);
    o_depth = v_depth;
}
"""

_SKY_VERTEX_SHADER = """
#version 330 core
out vec2 v_ndc;
void main() {   // one triangle covering the viewport
    v_ndc = vec2(gl_VertexID == 1 ? 3.0 : -1.0, gl_VertexID == 2 ? 3.0 : -1.0);
    gl_Position = vec4(v_ndc, 0.0, 1.0);
}
"""

_SKY_FRAGMENT_SHADER = """
#version 330 core
in vec2 v_ndc;
uniform mat4 u_inv;                 // inverse of proj * (view without its translation)
uniform vec2 u_z;                   // two clip-space depths, the nearer first (reversed Z swaps them)
uniform sampler2DArray u_sky;       // layers: Front, Back, Left, Right, Up, Down (looks.SKY_LAYERS)
layout(location = 0) out vec4 o_color;
layout(location = 1) out float o_depth;
void main() {
    vec4 a = u_inv * vec4(v_ndc, u_z.x, 1.0);
    vec4 b = u_inv * vec4(v_ndc, u_z.y, 1.0);
    vec3 d = b.xyz / b.w - a.xyz / a.w;   // the pixel's line of sight, world frame
    vec3 m = abs(d);
    float layer;
    vec2 st;
    if (m.x >= m.y && m.x >= m.z) {
        layer = d.x > 0.0 ? 0.0 : 1.0;
        st = vec2(d.x > 0.0 ? -d.y : d.y, d.z) / m.x;
    } else if (m.y >= m.z) {
        layer = d.y > 0.0 ? 3.0 : 2.0;
        st = vec2(d.y > 0.0 ? d.x : -d.x, d.z) / m.y;
    } else {
        layer = d.z > 0.0 ? 4.0 : 5.0;
        st = vec2(-d.y, d.z > 0.0 ? -d.x : d.x) / m.z;
    }
    o_color = vec4(texture(u_sky, vec3(0.5 * st + 0.5, layer)).rgb, 1.0);
    o_depth = 0.0;
}
"""

_SHADOW_VERTEX_SHADER = """
#version 330 core
layout(location = 0) in vec3 a_pos;
layout(location = 4) in float a_node;
uniform samplerBuffer u_nodes;
uniform mat4 u_light_mat;     // world minus origin -> the shadow map's clip space
void main() {""" + _NODE_POSITION + """\
    gl_Position = u_light_mat * vec4(p, 1.0);
}
"""

_SHADOW_FRAGMENT_SHADER = """
#version 330 core
void main() {}
"""

_MODES = {"triangles": "GL_TRIANGLES", "lines": "GL_LINES", "points": "GL_POINTS"}
_BACKGROUND_RGBA = np.array([*BACKGROUND, 255], dtype=np.float32) / 255.0
_ZERO4 = np.zeros(4, np.float32)


@dataclass
class Frame:
    """One rendered view.

    Attributes:
        rgb: (H, W, 3) uint8 colour, row 0 = top, or None when not asked for.
        depth: (H, W) float32 distance along the optical axis (m; the optical-frame Z), 0 where nothing was drawn
            within [near, far], or None when not asked for.
    """

    rgb: np.ndarray | None
    depth: np.ndarray | None


@dataclass
class Lighting:
    """The directional light (see the module docstring): ``direction`` (3,) unit vector towards the light (world),
    ``color`` (3,) in 0..1, ``ambient`` in [0, 1]."""

    direction: np.ndarray
    color: np.ndarray
    ambient: float

    @classmethod
    def from_world(cls, world: WorldModel) -> Lighting:
        """The light of ``world.lights`` (upstream defaults when absent)."""
        lights = getattr(world, "lights", None) or {}
        az = float(lights.get("light_azimuth_deg", math.radians(45.0)))
        el = float(lights.get("light_elevation_deg", math.radians(70.0)))
        color = np.asarray(list(lights.get("light_color", (255, 255, 255, 255)))[:3], dtype=np.float64) / 255.0
        ambient = float(lights.get("light_ambient", 0.5))
        d = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
        return cls(d, color, min(max(ambient, 0.0), 1.0))

    def shade(self, base_rgb: Any, normal: Any) -> np.ndarray:
        """The colour (0..255 float) a lit face of ``base_rgb`` (0..255) facing ``normal`` is drawn in."""
        n = np.asarray(normal, dtype=np.float64)
        n = n / np.linalg.norm(n)
        k = min(1.0, self.ambient + (1.0 - self.ambient) * max(0.0, float(n @ self.direction)))
        return np.clip(np.asarray(base_rgb, dtype=np.float64)[:3] * k * self.color, 0.0, 255.0)


def compile_program(GL: Any, vertex_src: str, fragment_src: str) -> int:
    """Compile and link a shader program (the current context's), fragment outputs ``o_color`` at location 0 and
    ``o_depth`` at 1, as the renderer's framebuffers expect.

    Raises:
        RenderUnavailableError: a shader did not compile or the program did not link (the log says why).
    """

    def shader(src: str, kind: Any) -> int:
        s = GL.glCreateShader(kind)
        GL.glShaderSource(s, src)
        GL.glCompileShader(s)
        if not GL.glGetShaderiv(s, GL.GL_COMPILE_STATUS):
            log = GL.glGetShaderInfoLog(s)
            GL.glDeleteShader(s)
            raise RenderUnavailableError(f"shader compilation failed: {log!r}")
        return s

    vs = shader(vertex_src, GL.GL_VERTEX_SHADER)
    fs = shader(fragment_src, GL.GL_FRAGMENT_SHADER)
    prog = GL.glCreateProgram()
    GL.glAttachShader(prog, vs)
    GL.glAttachShader(prog, fs)
    GL.glBindFragDataLocation(prog, 0, "o_color")
    GL.glBindFragDataLocation(prog, 1, "o_depth")
    GL.glLinkProgram(prog)
    GL.glDeleteShader(vs)
    GL.glDeleteShader(fs)
    if not GL.glGetProgramiv(prog, GL.GL_LINK_STATUS):
        raise RenderUnavailableError(f"shader link failed: {GL.glGetProgramInfoLog(prog)!r}")
    return prog


def _free_later(ctx: GLContext, buffers: list[int], textures: list[int], vaos: list[int], fbos: list[int],
                renderbuffers: list[int], programs: list[int]) -> None:
    """Queue the deletion of GL objects on the context (run the next time it is bound)."""

    def free() -> None:
        from OpenGL import GL

        if buffers:
            GL.glDeleteBuffers(len(buffers), buffers)
        if textures:
            GL.glDeleteTextures(textures)
        if vaos:
            GL.glDeleteVertexArrays(len(vaos), vaos)
        if fbos:
            GL.glDeleteFramebuffers(len(fbos), fbos)
        if renderbuffers:
            GL.glDeleteRenderbuffers(len(renderbuffers), renderbuffers)
        for p in programs:
            GL.glDeleteProgram(p)

    ctx.garbage.append(free)


class SceneRenderer:
    """Renders one :class:`SceneGeometry` from pinhole cameras (one renderer per world; cameras share it).

    Args:
        scene: the geometry (uploaded now).
        lighting: the light (default: from ``scene.world``).
        context: the OpenGL context to render with (default: the process's offscreen context; the viewer passes its
            window's).

    Raises:
        RenderUnavailableError: no offscreen OpenGL context (see :func:`~.gl_context.get_context`).
    """

    def __init__(self, scene: SceneGeometry, lighting: Lighting | None = None, *,
                 context: GLContext | None = None) -> None:
        self.scene = scene
        self.lighting = lighting if lighting is not None else Lighting.from_world(scene.world)
        self.ctx = context if context is not None else get_context()
        from OpenGL import GL

        self.GL = GL
        self._buffers: list[int] = []
        self._textures: list[int] = []
        self._vaos: list[int] = []
        self._fbos: list[int] = []
        self._renderbuffers: list[int] = []
        self._programs: list[int] = []
        self._targets: dict[tuple[int, int], int] = {}
        self._tex_ids: dict[int, int] = {}
        self.reversed_z = self.ctx.has_clip_control
        self.culling = True
        """Skip the parts out of view (:mod:`.frustum`); the images are the same either way."""
        self._transforms = np.zeros((0, 3, 4))
        self._moving = np.zeros(0, dtype=bool)
        """Nodes whose pose has changed at least once (their parts are drawn into the shadow map every frame)."""
        self._static_key: bytes | None = None
        lights = getattr(scene.world, "lights", None)
        self.lights = lights
        self.shadows = bool(lights is not None and lights["enable_shadows"])
        self._shadow_fbo = 0
        self._shadow_tex = 0
        self._sky_program = 0
        self._sky_tex = 0
        sky = skybox_faces(scene.world)
        with self.ctx.bound():
            self._program = self._compile()
            self._upload(scene.pack())
            if sky is not None:
                self._upload_sky(sky)
            if self.shadows:
                self._make_shadow_map(int(lights["shadow_map_size"]))  # type: ignore[index]
        self._finalizer = weakref.finalize(self, _free_later, self.ctx, self._buffers, self._textures, self._vaos,
                                           self._fbos, self._renderbuffers, self._programs)

    def close(self) -> None:
        """Free the GL objects now (the renderer cannot be used afterwards)."""
        self._finalizer()
        with self.ctx.bound():
            pass

    # ------------------------------------------------------------------ setup
    def _compile(self) -> int:
        GL = self.GL
        prog = compile_program(GL, _VERTEX_SHADER, _FRAGMENT_SHADER)
        self._programs.append(prog)
        self._loc = {name: GL.glGetUniformLocation(prog, name)
                     for name in ("u_nodes", "u_view", "u_proj", "u_texture", "u_textured", "u_lit", "u_light_dir",
                                  "u_light_color", "u_ambient", "u_shadows", "u_shadow_map", "u_light_mat", "u_eye",
                                  "u_bias")}
        GL.glUseProgram(prog)  # fixed texture units (samplers of different types may not share one)
        GL.glUniform1i(self._loc["u_nodes"], 0)
        GL.glUniform1i(self._loc["u_texture"], 1)
        GL.glUniform1i(self._loc["u_shadow_map"], 2)
        GL.glUseProgram(0)
        return prog

    def _upload_sky(self, faces: np.ndarray) -> None:
        """The skybox program and its (6, N, N, 4) faces as a 2D texture array (:mod:`.looks`)."""
        GL = self.GL
        self._sky_program = compile_program(GL, _SKY_VERTEX_SHADER, _SKY_FRAGMENT_SHADER)
        self._programs.append(self._sky_program)
        self._sky_inv_loc = GL.glGetUniformLocation(self._sky_program, "u_inv")
        self._sky_sampler_loc = GL.glGetUniformLocation(self._sky_program, "u_sky")
        self._sky_z_loc = GL.glGetUniformLocation(self._sky_program, "u_z")
        t = int(GL.glGenTextures(1))
        self._textures.append(t)
        n = min(faces.shape[1], int(GL.glGetIntegerv(GL.GL_MAX_TEXTURE_SIZE)))
        px = np.ascontiguousarray(faces[:, :n, :n])
        GL.glBindTexture(GL.GL_TEXTURE_2D_ARRAY, t)
        GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
        GL.glTexImage3D(GL.GL_TEXTURE_2D_ARRAY, 0, GL.GL_RGBA8, n, n, 6, 0, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE, px)
        for par, val in ((GL.GL_TEXTURE_WRAP_S, GL.GL_CLAMP_TO_EDGE), (GL.GL_TEXTURE_WRAP_T, GL.GL_CLAMP_TO_EDGE),
                         (GL.GL_TEXTURE_MIN_FILTER, GL.GL_LINEAR), (GL.GL_TEXTURE_MAG_FILTER, GL.GL_LINEAR)):
            GL.glTexParameteri(GL.GL_TEXTURE_2D_ARRAY, par, val)
        GL.glBindTexture(GL.GL_TEXTURE_2D_ARRAY, 0)
        self._sky_tex = t
        vao = int(GL.glGenVertexArrays(1))
        self._vaos.append(vao)
        self._sky_vao = vao

    def _make_shadow_map(self, size: int) -> None:
        """The shadow maps (the frame's and the still parts' one, :meth:`_shadow_pass`): ``size`` px square float
        depth textures (capped at the renderer's limit) and their framebuffers."""
        GL = self.GL
        size = max(1, min(size, int(GL.glGetIntegerv(GL.GL_MAX_TEXTURE_SIZE))))
        self._shadow_size = size
        maps = []
        for _ in range(2):
            t = int(GL.glGenTextures(1))
            self._textures.append(t)
            GL.glBindTexture(GL.GL_TEXTURE_2D, t)
            GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, GL.GL_DEPTH_COMPONENT32F, size, size, 0, GL.GL_DEPTH_COMPONENT,
                            GL.GL_FLOAT, None)
            for par, val in ((GL.GL_TEXTURE_WRAP_S, GL.GL_CLAMP_TO_EDGE), (GL.GL_TEXTURE_WRAP_T, GL.GL_CLAMP_TO_EDGE),
                             (GL.GL_TEXTURE_MIN_FILTER, GL.GL_NEAREST), (GL.GL_TEXTURE_MAG_FILTER, GL.GL_NEAREST),
                             (GL.GL_TEXTURE_COMPARE_MODE, GL.GL_NONE)):
                GL.glTexParameteri(GL.GL_TEXTURE_2D, par, val)
            GL.glBindTexture(GL.GL_TEXTURE_2D, 0)
            fbo = int(GL.glGenFramebuffers(1))
            self._fbos.append(fbo)
            GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, fbo)
            GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, GL.GL_DEPTH_ATTACHMENT, GL.GL_TEXTURE_2D, t, 0)
            GL.glDrawBuffer(GL.GL_NONE)
            GL.glReadBuffer(GL.GL_NONE)
            status = GL.glCheckFramebufferStatus(GL.GL_FRAMEBUFFER)
            GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, 0)
            if status != GL.GL_FRAMEBUFFER_COMPLETE:
                raise RenderUnavailableError(f"shadow map framebuffer {size}×{size} incomplete (status 0x{status:x})")
            maps.append((fbo, t))
        (self._shadow_fbo, self._shadow_tex), (self._static_fbo, self._static_tex) = maps
        self._shadow_in_use = self._shadow_tex
        # depth only: positions in, nothing out (llvmpipe then skips the lit shader for the map's millions of texels)
        self._shadow_program = compile_program(GL, _SHADOW_VERTEX_SHADER, _SHADOW_FRAGMENT_SHADER)
        self._programs.append(self._shadow_program)
        self._shadow_mat_loc = GL.glGetUniformLocation(self._shadow_program, "u_light_mat")
        GL.glUseProgram(self._shadow_program)
        GL.glUniform1i(GL.glGetUniformLocation(self._shadow_program, "u_nodes"), 0)
        GL.glUseProgram(0)

    def _upload(self, packed: PackedScene) -> None:
        GL = self.GL
        self.draws = packed.draws
        self._spans, self._span_node, self._span_box = packed.spans, packed.span_node, packed.span_box
        self._span_triangles = np.array([self.draws[int(i)].primitive == "triangles" for i in self._spans[:, 0]],
                                        dtype=bool)
        vao = int(GL.glGenVertexArrays(1))
        self._vaos.append(vao)
        GL.glBindVertexArray(vao)
        attribs = [(0, packed.positions, 3, GL.GL_FLOAT, False), (1, packed.normals, 3, GL.GL_FLOAT, False),
                   (2, packed.colors, 4, GL.GL_UNSIGNED_BYTE, True), (3, packed.uv, 2, GL.GL_FLOAT, False),
                   (4, packed.node, 1, GL.GL_FLOAT, False)]
        for loc, data, size, gl_type, normalized in attribs:
            buf = int(GL.glGenBuffers(1))
            self._buffers.append(buf)
            GL.glBindBuffer(GL.GL_ARRAY_BUFFER, buf)
            arr = np.ascontiguousarray(data)
            GL.glBufferData(GL.GL_ARRAY_BUFFER, max(arr.nbytes, 4), arr if arr.nbytes else None, GL.GL_STATIC_DRAW)
            GL.glEnableVertexAttribArray(loc)
            GL.glVertexAttribPointer(loc, size, gl_type, normalized, 0, None)
        ibo = int(GL.glGenBuffers(1))
        self._buffers.append(ibo)
        GL.glBindBuffer(GL.GL_ELEMENT_ARRAY_BUFFER, ibo)
        idx = np.ascontiguousarray(packed.indices, dtype=np.uint32)
        GL.glBufferData(GL.GL_ELEMENT_ARRAY_BUFFER, max(idx.nbytes, 4), idx if idx.nbytes else None,
                        GL.GL_STATIC_DRAW)
        GL.glBindVertexArray(0)
        # node poses: a texture buffer of RGBA32F texels, 3 per node
        self._node_buf = int(GL.glGenBuffers(1))
        self._buffers.append(self._node_buf)
        n = self.scene.n_nodes
        GL.glBindBuffer(GL.GL_TEXTURE_BUFFER, self._node_buf)
        GL.glBufferData(GL.GL_TEXTURE_BUFFER, n * 48, None, GL.GL_DYNAMIC_DRAW)
        self._node_tex = int(GL.glGenTextures(1))
        self._textures.append(self._node_tex)
        GL.glBindTexture(GL.GL_TEXTURE_BUFFER, self._node_tex)
        GL.glTexBuffer(GL.GL_TEXTURE_BUFFER, GL.GL_RGBA32F, self._node_buf)
        GL.glBindTexture(GL.GL_TEXTURE_BUFFER, 0)
        GL.glBindBuffer(GL.GL_TEXTURE_BUFFER, 0)
        for d in self.draws:
            if d.texture is not None and id(d.texture) not in self._tex_ids:
                self._tex_ids[id(d.texture)] = self._upload_texture(d.texture)
        self._write_nodes(self.scene.node_transforms())

    def _upload_texture(self, tex: TextureImage) -> int:
        GL = self.GL
        t = int(GL.glGenTextures(1))
        self._textures.append(t)
        GL.glBindTexture(GL.GL_TEXTURE_2D, t)
        px = np.asarray(tex.pixels, dtype=np.uint8)
        step = -(-max(px.shape[:2]) // int(GL.glGetIntegerv(GL.GL_MAX_TEXTURE_SIZE)))
        if step > 1:  # larger than the renderer can hold: keep every step-th texel
            px = px[::step, ::step]
        px = np.ascontiguousarray(px)
        GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
        GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, GL.GL_RGBA8, px.shape[1], px.shape[0], 0, GL.GL_RGBA,
                        GL.GL_UNSIGNED_BYTE, px)
        GL.glGenerateMipmap(GL.GL_TEXTURE_2D)
        GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_WRAP_S, GL.GL_REPEAT)
        GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_WRAP_T, GL.GL_REPEAT)
        GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MIN_FILTER, GL.GL_LINEAR_MIPMAP_LINEAR)
        GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MAG_FILTER, GL.GL_LINEAR)
        GL.glBindTexture(GL.GL_TEXTURE_2D, 0)
        return t

    def _target(self, width: int, height: int) -> int:
        """The framebuffer of this size (created on first use)."""
        key = (width, height)
        if key in self._targets:
            return self._targets[key]
        GL = self.GL
        limit = min(int(GL.glGetIntegerv(GL.GL_MAX_RENDERBUFFER_SIZE)),
                    *(int(v) for v in np.atleast_1d(GL.glGetIntegerv(GL.GL_MAX_VIEWPORT_DIMS))))
        if not (1 <= width <= limit and 1 <= height <= limit):
            raise RenderUnavailableError(f"cannot render a {width}×{height} image: this OpenGL renderer draws at most "
                                         f"{limit}×{limit} pixels")
        fbo = int(GL.glGenFramebuffers(1))
        self._fbos.append(fbo)
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, fbo)
        rbs = [int(r) for r in np.atleast_1d(GL.glGenRenderbuffers(3))]
        self._renderbuffers.extend(rbs)
        for rb, fmt, att in ((rbs[0], GL.GL_RGBA8, GL.GL_COLOR_ATTACHMENT0),
                             (rbs[1], GL.GL_R32F, GL.GL_COLOR_ATTACHMENT1),
                             (rbs[2], GL.GL_DEPTH_COMPONENT32F, GL.GL_DEPTH_ATTACHMENT)):
            GL.glBindRenderbuffer(GL.GL_RENDERBUFFER, rb)
            GL.glRenderbufferStorage(GL.GL_RENDERBUFFER, fmt, width, height)
            GL.glFramebufferRenderbuffer(GL.GL_FRAMEBUFFER, att, GL.GL_RENDERBUFFER, rb)
        status = GL.glCheckFramebufferStatus(GL.GL_FRAMEBUFFER)
        if status != GL.GL_FRAMEBUFFER_COMPLETE:
            raise RenderUnavailableError(f"offscreen framebuffer {width}×{height} incomplete (status 0x{status:x})")
        GL.glDrawBuffers(2, [GL.GL_COLOR_ATTACHMENT0, GL.GL_COLOR_ATTACHMENT1])
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, 0)
        self._targets[key] = fbo
        return fbo

    # ------------------------------------------------------------------ per frame
    def _write_nodes(self, transforms: np.ndarray) -> None:
        GL = self.GL
        new = np.asarray(transforms, dtype=np.float64).reshape(-1, 3, 4)
        if new.shape == self._transforms.shape:
            moved = (new != self._transforms).any(axis=(1, 2))
            if (moved & ~self._moving).any():  # a node moves for the first time: its parts leave the still map
                self._moving |= moved
                self._static_key = None
        else:
            self._moving = np.zeros(len(new), dtype=bool)
            self._static_key = None
        self._transforms = new
        data = np.ascontiguousarray(transforms, dtype=np.float32)
        if data.size:
            GL.glBindBuffer(GL.GL_TEXTURE_BUFFER, self._node_buf)
            GL.glBufferSubData(GL.GL_TEXTURE_BUFFER, 0, data.nbytes, data)
            GL.glBindBuffer(GL.GL_TEXTURE_BUFFER, 0)

    def update_nodes(self, transforms: np.ndarray | None = None) -> None:
        """Upload the node poses (default: :meth:`SceneGeometry.node_transforms` now); call once per step."""
        t = self.scene.node_transforms() if transforms is None else transforms
        with self.ctx.bound():
            self._write_nodes(t)

    def render(self, rot: np.ndarray, pos: np.ndarray, intrinsics: Intrinsics, near: float, far: float, *,
               rgb: bool = True, depth: bool = True) -> Frame:
        """Render the scene as seen by a pinhole camera.

        Args:
            rot: 3×3 rotation whose columns are the optical x (right), y (down), z (forward) axes in the world.
            pos: optical centre in the world (m).
            intrinsics: image size (px) and fx, fy, cx, cy (px).
            near, far: clipping distances along the optical axis (m), 0 < near < far.
            rgb, depth: which images to read back.

        Returns:
            The :class:`Frame` (fresh arrays, owned by the caller). A camera whose pose is not finite sees nothing
            (:data:`BACKGROUND`, depth 0): OpenGL is not called with NaN matrices.
        """
        if not (np.isfinite(rot).all() and np.isfinite(pos).all()):
            w, h = int(intrinsics.ncols), int(intrinsics.nrows)
            return Frame(np.full((h, w, 3), BACKGROUND, np.uint8) if rgb else None,
                         np.zeros((h, w), np.float32) if depth else None)
        proj = projection_matrix(intrinsics, near, far, zero_to_one=self.reversed_z)
        view = view_matrix(rot, pos, self.scene.origin)
        return self.render_matrices(view, proj, int(intrinsics.ncols), int(intrinsics.nrows), rgb=rgb, depth=depth)

    def render_matrices(self, view: np.ndarray, proj: np.ndarray, width: int, height: int, *, rgb: bool = True,
                        depth: bool = True, overlay: Callable[[np.ndarray, np.ndarray], None] | None = None,
                        focus: tuple[np.ndarray, float] | None = None) -> Frame:
        """Render into the ``width`` × ``height`` framebuffer with explicit matrices, then read back what is asked.

        Args:
            view: 4×4 world-minus-:attr:`SceneGeometry.origin` → optical frame (x right, y down, z forward, m).
            proj: 4×4 optical frame → clip space with image rows flipped (row 0 = top, as
                :func:`~.camera_model.projection_matrix` makes them) and the depth mapping :attr:`reversed_z` says.
            width, height: image size (px).
            rgb, depth: which images to read back (neither: the image stays in the framebuffer for :meth:`present`).
            overlay: called as ``overlay(view, proj)`` after the scene is drawn, with the framebuffer still bound and
                depth testing on (the viewer draws sensor points, frusta and its status panel there).
            focus: (point the view looks at, world minus origin, m; eye–point distance, m) that centres and sizes the
                shadow map (:mod:`.looks`); default: the eye and :data:`~.looks.SENSOR_EYE_DISTANCE`.
        """
        GL = self.GL
        w, h = int(width), int(height)
        eye = -view[:3, :3].T @ view[:3, 3]
        with self.ctx.bound():
            light_mat = None
            if self.shadows and self.draws:
                center, dist = focus if focus is not None else (eye, SENSOR_EYE_DISTANCE)
                lights = self.lights
                half = shadow_extension(lights, dist)
                light_mat = light_matrix(self.lighting.direction, shadow_center(center, half), half,
                                         float(lights["light_clip_plane_min"]),  # type: ignore[index]
                                         float(lights["light_clip_plane_max"]))  # type: ignore[index]
                self._shadow_pass(light_mat)
            fbo = self._target(w, h)
            GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, fbo)
            GL.glViewport(0, 0, w, h)
            if self.reversed_z:
                GL.glClipControl(GL.GL_LOWER_LEFT, GL.GL_ZERO_TO_ONE)
                GL.glDepthFunc(GL.GL_GREATER)
                clear_depth = 0.0
            else:
                GL.glDepthFunc(GL.GL_LESS)
                clear_depth = 1.0
            GL.glEnable(GL.GL_DEPTH_TEST)
            GL.glDepthMask(GL.GL_TRUE)
            GL.glDisable(GL.GL_BLEND)
            GL.glFrontFace(GL.GL_CW)  # the row flip of the projection mirrors the window (camera_model)
            colour = rgb or not depth  # (neither read back: the colour stays for present())
            # only the attachments asked for are cleared and written (a 1920 × 1080 RGB camera skips the 8 MB of its
            # optical depth, a depth camera the colour)
            GL.glDrawBuffers(2, [GL.GL_COLOR_ATTACHMENT0 if colour else GL.GL_NONE,
                                 GL.GL_COLOR_ATTACHMENT1 if depth else GL.GL_NONE])
            if colour:
                GL.glClearBufferfv(GL.GL_COLOR, 0, _BACKGROUND_RGBA)
            if depth:
                GL.glClearBufferfv(GL.GL_COLOR, 1, _ZERO4)
            GL.glClearBufferfv(GL.GL_DEPTH, 0, np.array([clear_depth], np.float32))
            if self._sky_program and colour:
                self._draw_sky(view, proj)
            if self.draws:
                self._draw(view, proj, light_mat, eye)
            if overlay is not None:
                overlay(view, proj)
            out_rgb = out_depth = None
            GL.glPixelStorei(GL.GL_PACK_ALIGNMENT, 1)
            if rgb:
                out_rgb = np.empty((h, w, 3), np.uint8)
                GL.glReadBuffer(GL.GL_COLOR_ATTACHMENT0)
                GL.glReadPixels(0, 0, w, h, GL.GL_RGB, GL.GL_UNSIGNED_BYTE, out_rgb)
            if depth:
                out_depth = np.empty((h, w), np.float32)
                GL.glReadBuffer(GL.GL_COLOR_ATTACHMENT1)
                GL.glReadPixels(0, 0, w, h, GL.GL_RED, GL.GL_FLOAT, out_depth)
            GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, 0)
            if self.reversed_z:
                GL.glClipControl(GL.GL_LOWER_LEFT, GL.GL_NEGATIVE_ONE_TO_ONE)
        return Frame(out_rgb, out_depth)

    def present(self, width: int, height: int, dst_width: int, dst_height: int) -> None:
        """Copy the colour of the last ``width`` × ``height`` render to the context's default framebuffer (a
        window), ``dst_width`` × ``dst_height`` px, flipping rows back (windows count rows from the bottom)."""
        GL = self.GL
        with self.ctx.bound():
            GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self._target(int(width), int(height)))
            GL.glReadBuffer(GL.GL_COLOR_ATTACHMENT0)
            GL.glBindFramebuffer(GL.GL_DRAW_FRAMEBUFFER, 0)
            GL.glBlitFramebuffer(0, 0, int(width), int(height), 0, int(dst_height), int(dst_width), 0,
                                 GL.GL_COLOR_BUFFER_BIT, GL.GL_NEAREST)
            GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, 0)

    def _draw_sky(self, view: np.ndarray, proj: np.ndarray) -> None:
        """Fill the colour attachment with the skybox (depth untouched, optical depth 0)."""
        GL = self.GL
        rot = view.copy()
        rot[:3, 3] = 0.0
        inv = np.linalg.inv(proj @ rot)
        GL.glDisable(GL.GL_DEPTH_TEST)
        GL.glDepthMask(GL.GL_FALSE)
        GL.glDisable(GL.GL_CULL_FACE)
        GL.glUseProgram(self._sky_program)
        GL.glUniformMatrix4fv(self._sky_inv_loc, 1, GL.GL_TRUE, inv.astype(np.float32))
        GL.glUniform2f(self._sky_z_loc, *((0.75, 0.25) if self.reversed_z else (0.25, 0.75)))
        GL.glActiveTexture(GL.GL_TEXTURE3)
        GL.glBindTexture(GL.GL_TEXTURE_2D_ARRAY, self._sky_tex)
        GL.glUniform1i(self._sky_sampler_loc, 3)
        GL.glBindVertexArray(self._sky_vao)
        GL.glDrawArrays(GL.GL_TRIANGLES, 0, 3)
        GL.glBindVertexArray(0)
        GL.glBindTexture(GL.GL_TEXTURE_2D_ARRAY, 0)
        GL.glActiveTexture(GL.GL_TEXTURE0)
        GL.glUseProgram(0)
        GL.glDepthMask(GL.GL_TRUE)
        GL.glEnable(GL.GL_DEPTH_TEST)

    def _shadow_pass(self, light_mat: np.ndarray) -> None:
        """Make the shadow map for ``light_mat``: the depth of the triangles as seen from the light.

        The parts of nodes that have never moved are drawn into a map of their own, kept while the light matrix
        stays the same; the frame's map is that one (when no moving part is in the light's box) or a copy of it
        with the moving parts drawn on top. Depth testing keeps the nearest surface whatever the order, so the map
        is the one a full redraw makes.
        """
        GL = self.GL
        n = self._shadow_size
        keep = self._keep(light_mat)
        if len(self._spans):
            keep &= self._span_triangles
        still = (~self._moving[self._span_node] if len(self._moving) == self.scene.n_nodes
                 else np.zeros_like(keep))
        key = np.asarray(light_mat, np.float64).tobytes()
        GL.glEnable(GL.GL_DEPTH_TEST)
        GL.glDepthMask(GL.GL_TRUE)
        GL.glDepthFunc(GL.GL_LESS)
        GL.glDisable(GL.GL_CULL_FACE)
        GL.glViewport(0, 0, n, n)
        if self._static_key != key:
            self._depth_pass(self._static_fbo, light_mat, keep & still)
            self._static_key = key
        moving = keep & ~still
        if not moving.any():
            self._shadow_in_use = self._static_tex
            return
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self._static_fbo)
        GL.glBindFramebuffer(GL.GL_DRAW_FRAMEBUFFER, self._shadow_fbo)
        GL.glBlitFramebuffer(0, 0, n, n, 0, 0, n, n, GL.GL_DEPTH_BUFFER_BIT, GL.GL_NEAREST)
        self._depth_pass(self._shadow_fbo, light_mat, moving, clear=False)
        self._shadow_in_use = self._shadow_tex

    def _depth_pass(self, fbo: int, light_mat: np.ndarray, keep: np.ndarray, *, clear: bool = True) -> None:
        """Draw the triangles of the parts ``keep`` (S,) into the depth framebuffer ``fbo`` as the light sees them."""
        GL = self.GL
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, fbo)
        if clear:
            GL.glClearBufferfv(GL.GL_DEPTH, 0, np.array([1.0], np.float32))
        GL.glUseProgram(self._shadow_program)
        GL.glUniformMatrix4fv(self._shadow_mat_loc, 1, GL.GL_TRUE, light_mat.astype(np.float32))
        GL.glActiveTexture(GL.GL_TEXTURE0)
        GL.glBindTexture(GL.GL_TEXTURE_BUFFER, self._node_tex)
        GL.glBindVertexArray(self._vaos[0])
        for runs in draw_runs(self._spans, keep, len(self.draws)):
            for first, count in runs:
                GL.glDrawElements(GL.GL_TRIANGLES, count, GL.GL_UNSIGNED_INT, ctypes.c_void_p(4 * first))
        GL.glBindVertexArray(0)
        GL.glBindTexture(GL.GL_TEXTURE_BUFFER, 0)
        GL.glUseProgram(0)

    def _keep(self, clip: np.ndarray) -> np.ndarray:
        """(S,) bool: the parts that may show through ``clip`` (4×4, world minus origin → clip space); every part
        when :attr:`culling` is off."""
        if self.culling and len(self._transforms) == self.scene.n_nodes:
            return boxes_in_view(self._span_box, self._span_node, self._transforms, np.asarray(clip, np.float64))
        return np.ones(len(self._spans), dtype=bool)

    def _runs(self, clip: np.ndarray) -> list[list[tuple[int, int]]]:
        """Per draw, the index runs (first, count) of the parts that may show through ``clip`` (see :meth:`_keep`)."""
        return draw_runs(self._spans, self._keep(clip), len(self.draws))

    def _draw(self, view: np.ndarray, proj: np.ndarray, light_mat: np.ndarray | None = None,
              eye: np.ndarray | None = None) -> None:
        GL = self.GL
        loc = self._loc
        light = self.lighting
        GL.glUseProgram(self._program)
        GL.glUniform1i(loc["u_shadows"], 0 if light_mat is None else 1)
        if light_mat is not None:
            lights = self.lights
            GL.glUniformMatrix4fv(loc["u_light_mat"], 1, GL.GL_TRUE, light_mat.astype(np.float32))
            GL.glUniform3f(loc["u_eye"], *(float(v) for v in (eye if eye is not None else np.zeros(3))))
            GL.glUniform3f(loc["u_bias"], float(lights["shadow_bias"]),  # type: ignore[index]
                           float(lights["shadow_bias_cam2frag"]),  # type: ignore[index]
                           float(lights["shadow_bias_normal"]))  # type: ignore[index]
            GL.glActiveTexture(GL.GL_TEXTURE2)
            GL.glBindTexture(GL.GL_TEXTURE_2D, self._shadow_in_use)
            GL.glUniform1i(loc["u_shadow_map"], 2)
        GL.glUniformMatrix4fv(loc["u_view"], 1, GL.GL_TRUE, view.astype(np.float32))
        GL.glUniformMatrix4fv(loc["u_proj"], 1, GL.GL_TRUE, proj.astype(np.float32))
        GL.glUniform3f(loc["u_light_dir"], *(float(v) for v in light.direction))
        GL.glUniform3f(loc["u_light_color"], *(float(v) for v in light.color))
        GL.glUniform1f(loc["u_ambient"], float(light.ambient))
        GL.glActiveTexture(GL.GL_TEXTURE0)
        GL.glBindTexture(GL.GL_TEXTURE_BUFFER, self._node_tex)
        GL.glUniform1i(loc["u_nodes"], 0)
        GL.glUniform1i(loc["u_texture"], 1)
        GL.glBindVertexArray(self._vaos[0])
        cull: str | None = None
        textured: int | None = None
        lit: bool | None = None
        for d, runs in zip(self.draws, self._runs(proj @ view), strict=True):
            if not runs:
                continue
            if d.cull != cull:
                cull = d.cull
                if cull == "none":
                    GL.glDisable(GL.GL_CULL_FACE)
                else:
                    GL.glEnable(GL.GL_CULL_FACE)
                    GL.glCullFace(GL.GL_BACK if cull == "back" else GL.GL_FRONT)
            tex = self._tex_ids.get(id(d.texture), 0) if d.texture is not None else 0
            if tex != textured:
                textured = tex
                GL.glActiveTexture(GL.GL_TEXTURE1)
                GL.glBindTexture(GL.GL_TEXTURE_2D, tex)
                GL.glUniform1i(loc["u_textured"], 1 if tex else 0)
            if d.lit != lit:
                lit = d.lit
                GL.glUniform1i(loc["u_lit"], 1 if lit else 0)
            if d.primitive == "points":
                GL.glPointSize(max(1.0, float(d.size)))
            mode = getattr(GL, _MODES[d.primitive])
            for first, count in runs:
                GL.glDrawElements(mode, count, GL.GL_UNSIGNED_INT, ctypes.c_void_p(4 * first))
        GL.glBindVertexArray(0)
        GL.glDisable(GL.GL_CULL_FACE)
        GL.glActiveTexture(GL.GL_TEXTURE2)
        GL.glBindTexture(GL.GL_TEXTURE_2D, 0)
        GL.glActiveTexture(GL.GL_TEXTURE1)
        GL.glBindTexture(GL.GL_TEXTURE_2D, 0)
        GL.glActiveTexture(GL.GL_TEXTURE0)
        GL.glBindTexture(GL.GL_TEXTURE_BUFFER, 0)
        GL.glUseProgram(0)


# ---------------------------------------------------------------------------------------------------- per world
def renderer_for(ctx: SensorContext) -> SceneRenderer:
    """The renderer of the world a :class:`~mvsim_core.sensors.scheduler.SensorContext` samples from, built on first
    use (scene geometry from the world and its live physics, without the visual-only blocks that only the viewer
    draws) and kept on the context."""
    r = ctx.renderer
    if r is None:
        scene = SceneGeometry(ctx.world, ctx.physics, visual_only=False)
        ctx.world.warnings.extend(w for w in scene.warnings if w not in ctx.world.warnings)
        r = SceneRenderer(scene)
        ctx.renderer = r
    return r
