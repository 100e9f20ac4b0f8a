"""Raw access to Box2D's ``b2Body`` structs through a numpy view of the address space (the bodies' hot path).

The world loop touches every vehicle every step: :meth:`~mvsim_core.dynamics.bodies.Bodies.read_states`,
:meth:`~mvsim_core.dynamics.bodies.Bodies.apply` and :meth:`~mvsim_core.dynamics.bodies.Bodies.set_velocities` work on
a list of names at once. pybox2d costs ~0.35 µs per attribute access, so the plain path (4 reads per body) costs
~1.2 µs/body. When the binding's ``b2Body`` memory layout is the expected one (checked once per process against the
API on a probe body, :func:`raw_layout_ok`; ``MVSIM_BOX2D_RAW=0`` or ``raw_access=False`` turns it off) the same
numbers are gathered from / scattered into the ``b2Body`` structs through a numpy view of the address space
(:func:`memory`): reads and writes are then one vectorised numpy operation for all bodies; sleeping bodies still go
through the API so that they are woken exactly as ``ApplyForceToCenter(wake=True)`` / ``SetLinearVelocity`` do.
Measured on the dev machine (2 cores, Python 3.11; 100 vehicles, median of 2000 calls; ±30 % between runs):

=====================  ====================  ===================
per body               raw view (default)    plain API
=====================  ====================  ===================
``read_states``        0.11 µs (11 µs/100)   1.2 µs
``apply``              0.14 µs               0.36 µs
``set_velocities``     0.22 µs               1.16 µs
=====================  ====================  ===================

Layout (Box2D 2.3.x, this binding), as float32 offsets inside ``b2Body``: ``m_xf.p`` (3, 4), ``m_xf.q`` (sin 5,
cos 6), ``m_sweep.localCenter`` (7, 8), ``m_sweep.a`` (14), ``m_linearVelocity`` (16, 17), ``m_angularVelocity``
(18), ``m_force`` (19, 20), ``m_torque`` (21); ``m_flags`` is the uint16 at byte 4, read as the low half of the int32
there (little-endian). Velocities in the struct are those of the centre of mass (COM); states exchanged with the
callers refer to the body origin.

This module owns every raw access of the package's dynamics to Box2D's memory (only :mod:`.box2d_state`, which
snapshots whole worlds, keeps its own world-struct offsets): the struct offsets, the address-space view, the ``.this``
address reads, the layout probes, and the accessors the other modules call -- vectorised numpy ones for the bodies'
batches (:func:`struct_indices`, :func:`add_forces`, :func:`write_velocities`, ...) and small compiled ones for their
kernels: a body's pose and velocity in :mod:`.kinematic_drive` (:func:`body_position`, :func:`set_com_velocity`,
:func:`is_awake`, ...), the contact lists in :mod:`.collision_flags` (:func:`read_ptr`, :func:`contact_list`,
:func:`contact_fixtures`, :func:`world_polygon`, ...).

Contact-walk byte offsets (Box2D 2.3.x, 64-bit; checked against the API on a probe scene before use,
:func:`contact_layout_ok`): b2Body::m_xf 12, m_contactList 136; b2ContactEdge::other 0, contact 8, next 24;
b2Contact::m_flags 8 (touching = 2), m_fixtureA 96, m_fixtureB 104; b2Fixture::m_body 16, m_shape 24, m_isSensor 58;
b2PolygonShape: m_type 8 (polygon = 2), m_radius 12, m_vertices 24, m_count 280.
"""

from __future__ import annotations

import ctypes
import logging
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import Box2D
import numpy as np

from mvsim_core.jit import njit

log = logging.getLogger("mvsim_core.dynamics")

AWAKE_FLAG = 0x0002  # b2Body::e_awakeFlag

# float32 offsets inside b2Body (see the module docstring)
OFF_P, OFF_Q, OFF_LC, OFF_A, OFF_V, OFF_W, OFF_F, OFF_T = 3, 5, 7, 14, 16, 18, 19, 21
READ_COLS = np.array([OFF_P, OFF_P + 1, OFF_Q, OFF_Q + 1, OFF_LC, OFF_LC + 1, OFF_A, OFF_V, OFF_V + 1, OFF_W])
"""float32 offsets gathered by :func:`read_raw_states`, in its column order."""
_STRUCT_FLOATS = 24
_raw_layout: bool | None = None

_FRAME_COLS = slice(2, 6)
"""Columns of :data:`READ_COLS` holding the rotation (sine, cosine) and the local centre (x, y)."""

MEM_LO, MEM_HI = 1 << 12, 1 << 48
"""Bytes: the address range [4 KiB, 256 TiB) that :func:`memory` views."""
_mem: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

# byte offsets of the contact walk (see the module docstring)
_B_XF, _B_CONTACTS = 12, 136
_E_OTHER, _E_CONTACT, _E_NEXT = 0, 8, 24
_C_FLAGS, _C_FA, _C_FB = 8, 96, 104
_F_BODY, _F_SHAPE, _F_SENSOR = 16, 24, 58
_S_TYPE, _S_RADIUS, _S_VERTS, _S_COUNT = 8, 12, 24, 280
_TOUCHING, _POLYGON = 2, 2
_raw_contacts: bool | None = None


def body_address(body: Any) -> int:
    """Address of a pybox2d object's C++ struct (``b2Body``, ``b2Fixture``, ...)."""
    return int(body.this)


def _floats_at(addr: int, n: int) -> np.ndarray:
    """The ``n`` float32 at byte address ``addr``, as a writable view (no copy)."""
    # memoryview: a ctypes array exports the buffer protocol, but numpy's stubs do not know it as a buffer
    return np.frombuffer(memoryview((ctypes.c_float * n).from_address(addr)), dtype=np.float32)


def _int32s_at(addr: int, n: int) -> np.ndarray:
    """The ``n`` int32 at byte address ``addr``, as a writable view (no copy)."""
    return np.frombuffer(memoryview((ctypes.c_int32 * n).from_address(addr)), dtype=np.int32)


def memory() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Views of the process's address space [4 KiB, 256 TiB) as bytes, int32, float32 and int64 (nothing is read
    until indexed; element i of the k-byte view is the k-byte value at address 4096 + k*i)."""
    global _mem
    if _mem is None:
        buf = memoryview((ctypes.c_uint8 * (MEM_HI - MEM_LO)).from_address(MEM_LO))
        _mem = (np.frombuffer(buf, dtype=np.uint8), np.frombuffer(buf, dtype=np.int32),
                np.frombuffer(buf, dtype=np.float32), np.frombuffer(buf, dtype=np.int64))
    return _mem


def _usable(addr: int) -> bool:
    """Whether a struct at byte address ``addr`` lies where the views reach it (in range, 8-byte aligned)."""
    return MEM_LO <= addr < MEM_HI - 512 and addr % 8 == 0


def views_for(objects: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The address-space views of :func:`memory` (bytes, int32, float32, int64) when every pybox2d object of
    ``objects`` has its struct where they reach it; None when ``objects`` is empty or one has not."""
    if not objects or not all(_usable(body_address(o)) for o in objects):
        return None
    return memory()


def body_addresses(objects: Sequence[Any]) -> np.ndarray:
    """Byte addresses of the structs of pybox2d objects, as an int64 array (what :func:`contact_list` and the
    contact walk take)."""
    return np.array([body_address(o) for o in objects], dtype=np.int64)


def struct_indices(bodies: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices into the views of :func:`memory` for a list of bodies: the float32 index of each ``b2Body`` struct
    (int64 (n,)), the float32 indices of its :data:`READ_COLS` (int64 (n, 10)) and the int32 index of the word
    holding ``m_flags`` (int64 (n,); low half, little-endian)."""
    base = (body_addresses(bodies) - MEM_LO) // 4
    return base, base[:, None] + READ_COLS[None, :], base + 1


def awake_mask(i32: np.ndarray, flag_idx: np.ndarray) -> np.ndarray:
    """(n,) bool: whether each body is awake, from the int32 view and :func:`struct_indices`' flag indices."""
    return (i32[flag_idx] & AWAKE_FLAG) != 0


def read_frames(f32: np.ndarray, read_idx: np.ndarray) -> np.ndarray:
    """(n, 4) float64: each body's rotation sine, cosine and local centre x, y (m, body frame), from the float32
    view and :func:`struct_indices`' read indices."""
    return f32[read_idx[:, _FRAME_COLS]].astype(np.float64)


def add_forces(f32: np.ndarray, base: np.ndarray, fx: np.ndarray, fy: np.ndarray, tq: np.ndarray) -> None:
    """Add force (fx, fy: N, world frame, at the COM) and torque (tq: N·m) into the structs at float32 indices
    ``base`` (what ``ApplyForceToCenter`` + ``ApplyTorque`` do to an awake dynamic body)."""
    f32[base + OFF_F] += fx
    f32[base + OFF_F + 1] += fy
    f32[base + OFF_T] += tq


def write_velocities(f32: np.ndarray, base: np.ndarray, vx: np.ndarray, vy: np.ndarray, w: np.ndarray) -> None:
    """Set the COM velocity (vx, vy: m/s, world frame) and angular velocity (w: rad/s) of the structs at float32
    indices ``base`` (what ``linearVelocity`` / ``angularVelocity`` do to an awake body)."""
    f32[base + OFF_V] = vx
    f32[base + OFF_V + 1] = vy
    f32[base + OFF_W] = w


def raw_layout_ok() -> bool:
    """Whether ``b2Body`` structs have the layout the raw view expects (checked once, on a probe body)."""
    global _raw_layout
    if _raw_layout is None:
        try:
            _raw_layout = _probe_layout()
        except Exception:  # noqa: BLE001 - any surprise means: use the API
            _raw_layout = False
        if not _raw_layout:
            log.info("Box2D body layout not recognised; using the plain pybox2d API for body states")
    return _raw_layout


def _probe_layout() -> bool:
    w = Box2D.b2World(gravity=(0, 0))
    b = w.CreateDynamicBody(position=(1.25, -2.5), angle=0.75)
    b.CreatePolygonFixture(box=(0.5, 0.25, (0.375, -0.125), 0.0), density=2.0)
    b.linearVelocity = (3.5, -4.25)
    b.angularVelocity = 0.625
    b.ApplyForceToCenter((7.5, -8.5), True)
    b.ApplyTorque(9.5, True)
    addr = body_address(b)
    with np.errstate(invalid="ignore"):  # the struct's padding may hold signalling-NaN bit patterns
        m = _floats_at(addr, _STRUCT_FLOATS).astype(np.float64)
    flags = int(_int32s_at(addr, 2)[1])  # m_flags word
    lc = b.localCenter
    expect = {OFF_P: 1.25, OFF_P + 1: -2.5, OFF_Q: math.sin(0.75), OFF_Q + 1: math.cos(0.75), OFF_LC: lc.x,
              OFF_LC + 1: lc.y, OFF_A: 0.75, OFF_V: 3.5, OFF_V + 1: -4.25, OFF_W: 0.625, OFF_F: 7.5,
              OFF_F + 1: -8.5, OFF_T: 9.5}
    ok = all(abs(m[k] - v) < 1e-6 for k, v in expect.items()) and bool(flags & AWAKE_FLAG)
    b.awake = False
    flags = int(_int32s_at(addr, 2)[1])
    ok = ok and not flags & AWAKE_FLAG
    # a force written into the struct must act as ApplyForceToCenter does
    b.awake = True
    b2 = w.CreateDynamicBody(position=(10.0, 0.0))
    b2.CreatePolygonFixture(box=(0.5, 0.5), density=1.0)
    b3 = w.CreateDynamicBody(position=(20.0, 0.0))
    b3.CreatePolygonFixture(box=(0.5, 0.5), density=1.0)
    _floats_at(body_address(b2), _STRUCT_FLOATS)[OFF_F] += 4.0
    b3.ApplyForceToCenter((4.0, 0.0), True)
    w.Step(0.01, 8, 3)
    ok = ok and abs(b2.linearVelocity.x - b3.linearVelocity.x) < 1e-9 and b2.linearVelocity.x > 0
    del b, b2, b3, w
    return ok


@njit(cache=True)
def read_raw_states(f32: np.ndarray, read_idx: np.ndarray, out: np.ndarray) -> None:
    """``read_states`` over the raw body structs: columns of ``read_idx`` as :data:`READ_COLS` (position, rotation
    sine/cosine, local centre, angle, COM velocity, angular velocity); writes origin states (n×6)."""
    for i in range(read_idx.shape[0]):
        r = read_idx[i]
        x, y = float(f32[r[0]]), float(f32[r[1]])
        s, c = float(f32[r[2]]), float(f32[r[3]])
        lx, ly = float(f32[r[4]]), float(f32[r[5]])
        w = float(f32[r[9]])
        dx = c * lx - s * ly  # origin -> COM, world frame
        dy = s * lx + c * ly
        out[i, 0] = x
        out[i, 1] = y
        out[i, 2] = float(f32[r[6]])
        out[i, 3] = float(f32[r[7]]) + w * dy
        out[i, 4] = float(f32[r[8]]) - w * dx
        out[i, 5] = w


@njit(cache=True)
def read_raw_positions(f32: np.ndarray, read_idx: np.ndarray, out: np.ndarray) -> None:
    """Body origins (m, world frame) from the raw structs: ``out[i]`` = the first two :data:`READ_COLS` of row i
    (n×2, float64)."""
    for i in range(read_idx.shape[0]):
        out[i, 0] = float(f32[read_idx[i, 0]])
        out[i, 1] = float(f32[read_idx[i, 1]])


@njit(cache=True)
def apply_raw(f32: np.ndarray, i32: np.ndarray, base: np.ndarray, flag_idx: np.ndarray, dynamic: np.ndarray,
              fx: np.ndarray, fy: np.ndarray, tq: np.ndarray) -> bool:
    """Add force and torque straight into the structs when every body is dynamic and awake (then True); otherwise
    change nothing and return False (the caller takes the slower path that wakes bodies through the API)."""
    for i in range(base.shape[0]):
        if not dynamic[i] or (i32[flag_idx[i]] & AWAKE_FLAG) == 0:
            return False
    for i in range(base.shape[0]):
        f32[base[i] + OFF_F] += fx[i]
        f32[base[i] + OFF_F + 1] += fy[i]
        f32[base[i] + OFF_T] += tq[i]
    return True



# ---------------------------------------------------------------------------------------- one body, in kernels
@njit(cache=True)
def is_awake(i32: np.ndarray, flag: int) -> bool:
    """Whether the body whose ``m_flags`` word is at int32 index ``flag`` of the int32 view is awake."""
    return (i32[flag] & AWAKE_FLAG) != 0


@njit(cache=True)
def body_position(f32: np.ndarray, b: int) -> tuple[float, float]:
    """Origin (x, y; m, world frame) of the body whose struct is at float32 index ``b`` of the float32 view."""
    return float(f32[b + OFF_P]), float(f32[b + OFF_P + 1])


@njit(cache=True)
def body_angle(f32: np.ndarray, b: int) -> float:
    """Angle (rad, Box2D's continuous one, not wrapped) of the body whose struct is at float32 index ``b``."""
    return float(f32[b + OFF_A])


@njit(cache=True)
def body_rotation(f32: np.ndarray, b: int) -> tuple[float, float]:
    """Sine and cosine of the rotation of the body whose struct is at float32 index ``b``."""
    return float(f32[b + OFF_Q]), float(f32[b + OFF_Q + 1])


@njit(cache=True)
def body_local_center(f32: np.ndarray, b: int) -> tuple[float, float]:
    """Centre of mass (m, body frame) of the body whose struct is at float32 index ``b``."""
    return float(f32[b + OFF_LC]), float(f32[b + OFF_LC + 1])


@njit(cache=True)
def set_com_velocity(f32: np.ndarray, b: int, vx: float, vy: float, w: float) -> None:
    """Set the COM velocity (vx, vy: m/s, world frame) and angular velocity (w: rad/s) of the body whose struct is
    at float32 index ``b`` (stored as float32)."""
    f32[b + OFF_V] = vx
    f32[b + OFF_V + 1] = vy
    f32[b + OFF_W] = w


# ---------------------------------------------------------------------------------------- contact lists, in kernels
@njit(cache=True)
def read_ptr(m64: np.ndarray, a: int) -> int:
    """The pointer (int64) at byte address ``a``, through the int64 view."""
    return m64[(a - MEM_LO) >> 3]


@njit(cache=True)
def read_i32(m32: np.ndarray, a: int) -> int:
    """The int32 at byte address ``a``, through the int32 view."""
    return m32[(a - MEM_LO) >> 2]


@njit(cache=True)
def read_f32(mf: np.ndarray, a: int) -> float:
    """The float32 at byte address ``a``, through the float32 view."""
    return mf[(a - MEM_LO) >> 2]


@njit(cache=True)
def valid_ptr(p: int) -> bool:
    """Whether ``p`` may be a struct's address (in the views' range, 8-byte aligned)."""
    return MEM_LO <= p < MEM_HI - 512 and p % 8 == 0


@njit(cache=True)
def contact_list(m64: np.ndarray, body: int) -> int:
    """Address of the first ``b2ContactEdge`` of the body at byte address ``body`` (0: it has none)."""
    return read_ptr(m64, body + _B_CONTACTS)


@njit(cache=True)
def edge_contact(m64: np.ndarray, edge: int) -> int:
    """Address of the ``b2Contact`` of the contact edge at byte address ``edge``."""
    return read_ptr(m64, edge + _E_CONTACT)


@njit(cache=True)
def edge_next(m64: np.ndarray, edge: int) -> int:
    """Address of the next edge of the same body's contact list (0: the last one)."""
    return read_ptr(m64, edge + _E_NEXT)


@njit(cache=True)
def contact_fixtures(m64: np.ndarray, contact: int) -> tuple[int, int]:
    """Addresses of the two ``b2Fixture`` (A, B) of the contact at byte address ``contact``."""
    return read_ptr(m64, contact + _C_FA), read_ptr(m64, contact + _C_FB)


@njit(cache=True)
def contact_touching(m32: np.ndarray, contact: int) -> bool:
    """Whether Box2D's touching bit is set on the contact at byte address ``contact``."""
    return (read_i32(m32, contact + _C_FLAGS) & _TOUCHING) != 0


@njit(cache=True)
def fixture_is_sensor(m8: np.ndarray, fixture: int) -> bool:
    """Whether the fixture at byte address ``fixture`` is a sensor (through the byte view)."""
    return m8[fixture + _F_SENSOR - MEM_LO] != 0


@njit(cache=True)
def world_polygon(m32: np.ndarray, mf: np.ndarray, m64: np.ndarray, fixture: int,
                  out: np.ndarray) -> tuple[int, float]:
    """Vertices (m, world frame) of a polygon fixture into ``out`` (rows 0..count-1); (count, skin radius in m),
    count -1 if not a polygon (or one of more than ``out``'s rows)."""
    body = read_ptr(m64, fixture + _F_BODY)
    shape = read_ptr(m64, fixture + _F_SHAPE)
    if not (valid_ptr(body) and valid_ptr(shape)) or read_i32(m32, shape + _S_TYPE) != _POLYGON:
        return -1, 0.0
    n = read_i32(m32, shape + _S_COUNT)
    if n < 3 or n > out.shape[0]:
        return -1, 0.0
    px, py = read_f32(mf, body + _B_XF), read_f32(mf, body + _B_XF + 4)
    sn, cs = read_f32(mf, body + _B_XF + 8), read_f32(mf, body + _B_XF + 12)
    for i in range(n):
        vx, vy = read_f32(mf, shape + _S_VERTS + 8 * i), read_f32(mf, shape + _S_VERTS + 8 * i + 4)
        out[i, 0] = px + cs * vx - sn * vy
        out[i, 1] = py + sn * vx + cs * vy
    return n, read_f32(mf, shape + _S_RADIUS)


# ---------------------------------------------------------------------------------------- the contact-layout probe
class ContactProbe(NamedTuple):
    """The probe scene of :func:`contact_probe_scene` (one step made): body ``a`` (polygon fixture ``fa``) with near
    misses only -- wall pieces ``near`` 3.5 cm and 12 cm away (skins 1 cm each) -- and an overlapping ``sensor``;
    body ``b`` (a triangle) touching a wall; ``s``: the static body holding the walls and the sensor."""

    world: Box2D.b2World
    a: Box2D.b2Body
    b: Box2D.b2Body
    s: Box2D.b2Body
    fa: Box2D.b2Fixture
    near: list[Box2D.b2Fixture]
    sensor: Box2D.b2Fixture


def contact_probe_scene() -> ContactProbe:
    """A small Box2D world whose contacts the raw contact walk is checked on (:func:`contact_layout_ok`, and the
    collision flags of :mod:`.collision_flags`); the same every call."""
    w = Box2D.b2World(gravity=(0, 0))
    a = w.CreateDynamicBody(position=(0.25, -0.5), angle=0.2)
    fa = a.CreatePolygonFixture(box=(0.5, 0.4), density=1.0)
    s = w.CreateStaticBody(position=(0.5, 0.25), angle=-0.3)
    near = []
    for gap in (0.035, -0.12):
        x = (0.5 + abs(gap) + 0.05) * math.copysign(1.0, gap)
        centre = s.GetLocalPoint(a.GetWorldPoint((x, 0.0)))
        near.append(s.CreatePolygonFixture(box=(0.05, 0.3, tuple(centre), 0.5)))
    sensor = s.CreatePolygonFixture(box=(0.3, 0.3, tuple(s.GetLocalPoint(a.position)), 0.0))
    sensor.sensor = True
    b = w.CreateDynamicBody(position=(10.0, 0.0))
    b.CreatePolygonFixture(vertices=[(0.0, 0.0), (1.0, 0.0), (0.5, 0.8)], density=1.0)
    s.CreatePolygonFixture(box=(0.5, 0.5, tuple(s.GetLocalPoint((10.5, -0.5))), 0.0))
    w.Step(0.001, 8, 3)
    return ContactProbe(world=w, a=a, b=b, s=s, fa=fa, near=near, sensor=sensor)


def contact_layout_ok() -> bool:
    """Whether the contact accessors above read this binding's contact lists, contacts, fixtures and polygons right
    (checked once, against the API on :func:`contact_probe_scene`)."""
    global _raw_contacts
    if _raw_contacts is None:
        try:
            _raw_contacts = _probe_contact_layout()
        except Exception:  # noqa: BLE001 - any surprise means: use the API
            _raw_contacts = False
    return _raw_contacts


def _probe_contact_layout() -> bool:
    m8, m32, mf, m64 = memory()

    def ptr(a: int) -> int:
        return int(m64[(a - MEM_LO) >> 3])

    p = contact_probe_scene()
    edges = {body_address(ed): ed for ed in p.a.contacts}  # pybox2d lists them in its own order
    walked, e = [], ptr(body_address(p.a) + _B_CONTACTS)
    while e in edges and e not in walked:
        walked.append(e)
        e = ptr(e + _E_NEXT)
    if len(edges) < 3 or e != 0 or set(walked) != set(edges):
        return False
    for ea, ed in edges.items():
        c = ed.contact
        ca = body_address(c)
        if (ptr(ea + _E_OTHER), ptr(ea + _E_CONTACT)) != (body_address(ed.other), ca):
            return False
        if bool(int(m32[(ca + _C_FLAGS - MEM_LO) >> 2]) & _TOUCHING) != c.touching:
            return False
        if (ptr(ca + _C_FA), ptr(ca + _C_FB)) != (body_address(c.fixtureA), body_address(c.fixtureB)):
            return False
    for f in (p.fa, *p.near, p.sensor):
        fp = body_address(f)
        if (ptr(fp + _F_BODY), ptr(fp + _F_SHAPE)) != (body_address(f.body), body_address(f.shape)):
            return False
        if bool(m8[fp + _F_SENSOR - MEM_LO]) != f.sensor:
            return False
        out = np.empty((16, 2))
        n, r = world_polygon(m32, mf, m64, fp, out)
        want = np.array([tuple(f.body.GetWorldPoint(v)) for v in f.shape.vertices])
        if n != len(want) or abs(r - f.shape.radius) > 1e-7 or not np.allclose(out[:n], want, atol=1e-5):
            return False
    return True
