"""Exact snapshots of a Box2D world: everything it carries from one step to the next, read from Box2D's own structs
and written back into them (:func:`capture`, :func:`restore`, :class:`Box2DState`).

What a ``b2World`` (Box2D 2.3) keeps between two steps, and so what a snapshot holds:

* **bodies**: transform, sweep (centre of mass at the start and end of the last step, angles, TOI fraction),
  velocities, force and torque accumulators, flags (awake, ...), sleep timer, and mass data (summed in the order of
  the body's fixture list);
* **fixture lists**: their order (mass data is summed over it again when a fixture comes or goes, e.g. a steered
  wheel's box);
* **broad phase**: the dynamic AABB tree, whose leaves hold each fixture's enlarged ("fat") box, which decides when
  a contact begins and ends, and whose leaf numbers (proxy ids) order the pairs found in one search; the buffer of
  proxies moved since the last search;
* **contacts**: which fixture pairs have one, their order in the world's list and in each body's list (the island
  solver visits them in that order), their flags and manifolds with the accumulated normal and tangent impulses that
  warm-start the next solve;
* **joints**: their order in the same kind of lists, their accumulated impulses and limit states;
* **world**: 1/dt of the last step (the next step scales the warm-start impulses by dt / dt_previous) and its flags.

Box2D makes contacts only through its broad phase, links every new contact and joint at the head of its lists, and
keeps impulses private, so this module works on the structs in memory through the address-space view of
:mod:`.box2d_raw`, at the byte offsets below (Box2D 2.3.x as built by pybox2d 2.3.10, 64-bit). They are checked once
per process against the pybox2d API on a probe scene (:func:`layout_ok`); where they do not match, :func:`capture`
raises :class:`~mvsim_core.errors.SnapshotError`.

**Restoring** into a ``b2World`` that holds the same bodies, in the same order, with the same fixtures (matched by
their contents: shape, density, friction, restitution, filter; the caller makes the fixture sets equal first) and
the same joints (given in the same order as to :func:`capture`):

1. every contact is destroyed; the AABB tree is overwritten with the saved one (node for node, so that proxy ids,
   fat boxes and the free list are those of the snapshot) and each fixture's proxy pointed at its saved leaf;
2. Box2D's own pair search (``FindNewContacts``, from the proxies of the bodies that move) makes the contacts of
   every overlapping pair again; those the snapshot did not have are destroyed (pairs it would find at the next
   step);
3. contacts, joints and fixtures are linked in the saved orders, the contacts' flags and manifolds and the joints'
   impulses written back; then the bodies' state, the move buffer, 1/dt of the last step and the world flags.

The result steps bit for bit as the world that was captured. One thing is not rebuilt: a contact whose fat boxes
stopped overlapping during the last step (Box2D destroys it at the start of the next one without using it) cannot be
made again by the pair search; :func:`restore` returns how many such contacts there were. The only trace it leaves
is a wake-up: destroying a *touching* contact wakes its bodies, which only matters for a body asleep, and a body
that falls asleep has not moved 0.1 m in its last step. Supported joints: revolute, distance, friction, rope (the
ones :mod:`.bodies` makes); shapes: polygons and circles.

Fixtures are told apart by a 128-bit digest of their contents (:func:`_fixture_keys`, compiled): two different
fixtures of one body with the same digest would be swapped, a chance of about 2^-128 per pair. Cost: a restore into
the same world is a few dozen numpy operations and one compiled pass over the fixtures (~0.3 ms for a robot in a
room, ~2 ms with 4700 occupancy-grid squares); see :mod:`mvsim_core.world_state` for whole-world figures.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import Box2D
import numpy as np

from mvsim_core.dynamics.box2d_raw import MEM_HI, MEM_LO, body_address, memory
from mvsim_core.errors import SnapshotError
from mvsim_core.jit import njit

log = logging.getLogger("mvsim_core.dynamics")


# ------------------------------------------------------------------------------------------------ byte offsets
# b2World: b2BlockAllocator (128 bytes) and b2StackAllocator (102936 bytes with pybox2d's b2_stackSize = 100 KiB and
# 32 stack entries) come first.
W_FLAGS = 103064  # int32 m_flags (e_newFixture 1, e_locked 2, e_clearForces 4)
W_CM = 103072  # b2ContactManager m_contactManager, starting with its b2BroadPhase, starting with its b2DynamicTree
W_BODY_LIST, W_JOINT_LIST, W_BODY_COUNT, W_JOINT_COUNT = 103200, 103208, 103216, 103220
W_INV_DT0, W_STEP_COMPLETE = 103256, 103263  # float32 m_inv_dt0; bool m_stepComplete
# inside the contact manager (relative to W_CM)
T_ROOT, T_NODES, T_COUNT, T_CAPACITY, T_FREE, T_PATH, T_INSERTIONS = 0, 8, 16, 20, 24, 28, 32
BP_PROXY_COUNT, BP_MOVE_BUFFER, BP_MOVE_CAPACITY, BP_MOVE_COUNT = 40, 48, 56, 60
CM_CONTACT_LIST, CM_CONTACT_COUNT = 88, 96
# b2TreeNode (40 bytes): aabb 0..16, userData 16 (the b2FixtureProxy of a leaf), parent/next 24, child1 28, child2 32,
# height 36 (0: leaf, -1: free)
NODE_SIZE, N_USER, N_HEIGHT = 40, 16, 36
# b2Body
B_TYPE, B_NEXT, B_FIXTURES, B_JOINTS, B_CONTACTS = 0, 104, 112, 128, 136
BODY_STATE = np.r_[4:88, 144:176]
"""Bytes of a b2Body that evolve: m_flags, m_islandIndex, m_xf, m_sweep, velocities, force, torque (4..88); mass
data, damping, gravity scale, sleep time (144..176). The rest are pointers (world, lists, user data) and the type."""
# b2Fixture
F_NEXT, F_BODY, F_SHAPE, F_PROXIES, F_PROXY_COUNT = 8, 16, 24, 40, 48
FIXTURE_SIGNATURE = np.r_[0:4, 32:40, 52:59]
"""Bytes of a b2Fixture that tell it from another: density (0), friction and restitution (32), filter (52) and the
sensor flag (58)."""
# b2FixtureProxy (32 bytes): aabb 0..16, fixture 16, childIndex 24, proxyId 28
PROXY_SIZE, P_FIXTURE, P_ID = 32, 16, 28
# b2Shape / b2PolygonShape: m_type 8, m_radius 12, centroid (polygon) or centre (circle) 16; vertices 24; count 280
S_TYPE, S_HEAD_END, S_VERTICES, S_COUNT = 8, 24, 24, 280
SHAPE_CIRCLE, SHAPE_POLYGON = 0, 2
# b2Contact (208 bytes): m_flags 8, m_prev 16, m_next 24, m_nodeA 32, m_nodeB 64, m_fixtureA 96, m_fixtureB 104,
# m_indexA 112, m_indexB 116, then the manifold, TOI count and time, friction, restitution, tangent speed (120..208)
C_FLAGS, C_PREV, C_NEXT, C_NODE_A, C_NODE_B, C_FA, C_FB, C_IA, C_IB = 8, 16, 24, 32, 64, 96, 104, 112, 116
CONTACT_STATE = np.r_[120:208]
# b2ContactEdge / b2JointEdge: other 0, contact or joint 8, prev 16, next 24
E_PTR, E_PREV, E_NEXT = 8, 16, 24
# b2Joint: m_type 8, m_prev 16, m_next 24, m_edgeA 32, m_edgeB 64, m_bodyA 96, m_bodyB 104
J_TYPE, J_PREV, J_NEXT, J_EDGE_A, J_EDGE_B, J_BODY_A, J_BODY_B = 8, 16, 24, 32, 64, 96, 104
JOINT_REVOLUTE, JOINT_DISTANCE, JOINT_FRICTION, JOINT_ROPE = 1, 3, 9, 10
JOINT_STATE = {
    JOINT_REVOLUTE: np.r_[144:160, 284:288],  # m_impulse (x, y, z), m_motorImpulse; m_limitState
    JOINT_DISTANCE: np.r_[160:164],  # m_impulse
    JOINT_FRICTION: np.r_[144:156],  # m_linearImpulse, m_angularImpulse
    JOINT_ROPE: np.r_[152:156, 224:228],  # m_impulse; m_state
}
"""Bytes of each supported joint type that carry over from one step to the next (its accumulated impulses, which
warm-start the solver, and its limit state); the rest is configuration or recomputed every step."""
_JOINT_NAMES = {JOINT_REVOLUTE: "revolute", JOINT_DISTANCE: "distance", JOINT_FRICTION: "friction",
                JOINT_ROPE: "rope"}
TREE_HEADER = (T_ROOT, T_COUNT, T_CAPACITY, T_FREE, T_PATH, T_INSERTIONS)


@dataclass
class Box2DState:
    """Everything a b2World carries from one step to the next (see the module docstring), as plain arrays: no
    pointer, no Box2D object; it pickles. Bodies are numbered in the world's body-list order, fixtures in body order
    then each body's fixture-list order, joints in the order given to :func:`capture`, contacts in the world's
    contact-list order.

    Attributes:
        body_types: (B,) int32 Box2D body types (static 0, kinematic 1, dynamic 2), a check on restore.
        bodies: (B, 116) uint8, the bytes :data:`BODY_STATE` of each body.
        fixture_start: (B + 1,) fixtures of body b are ``fixture_start[b]:fixture_start[b + 1]``, in list order.
        fixture_keys: (F, 2) uint64 digest of each fixture's contents (:func:`_fixture_keys`), to find it again.
        proxy_ids: (F,) int32 broad-phase proxy id of each fixture (-1 without a proxy: inactive body).
        proxy_boxes: (F, 16) uint8 each proxy's tight AABB (b2FixtureProxy::aabb).
        tree: (capacity, 40) uint8 the nodes of the dynamic tree, user data zeroed.
        tree_leaves: (capacity,) int64 the fixture of each leaf node, -1 for the other nodes.
        tree_header: root, node count, capacity, free list, path, insertion count (int32).
        proxy_count: the broad phase's proxy count.
        moves: int32 proxy ids in the move buffer (moved since the last pair search).
        contact_fixtures: (K, 2) int64 fixture A and B of each contact.
        contact_children: (K, 2) int32 their child indices.
        contact_flags: (K,) uint32 each contact's flags.
        contacts: (K, 88) uint8 manifold, TOI count and time, friction, restitution, tangent speed.
        contact_edge_start, contact_edges: each body's contact list (contact numbers, in order), body b's being
            ``contact_edges[contact_edge_start[b]:contact_edge_start[b + 1]]``.
        joint_types: (J,) int32; joint_bodies: (J, 2) int64 body A and B of each joint.
        joint_order: joint numbers in the world's joint-list order.
        joints: per joint, the uint8 bytes :data:`JOINT_STATE` of its type.
        joint_edge_start, joint_edges: each body's joint list, as the contacts'.
        world_flags: b2World::m_flags. inv_dt0: 1/dt of the last step (float32 bits as uint32). step_complete: bool.
    """

    body_types: np.ndarray
    bodies: np.ndarray
    fixture_start: np.ndarray
    fixture_keys: np.ndarray
    proxy_ids: np.ndarray
    proxy_boxes: np.ndarray
    tree: np.ndarray
    tree_leaves: np.ndarray
    tree_header: np.ndarray
    proxy_count: int
    moves: np.ndarray
    contact_fixtures: np.ndarray
    contact_children: np.ndarray
    contact_flags: np.ndarray
    contacts: np.ndarray
    contact_edge_start: np.ndarray
    contact_edges: np.ndarray
    joint_types: np.ndarray
    joint_bodies: np.ndarray
    joint_order: np.ndarray
    joints: list[np.ndarray]
    joint_edge_start: np.ndarray
    joint_edges: np.ndarray
    world_flags: int
    inv_dt0: int
    step_complete: bool


@njit(cache=True)
def _walk(m64: np.ndarray, first: int, next_off: int, out: np.ndarray) -> int:
    """Addresses along a singly linked list into ``out``: ``first``, then the pointer at byte ``next_off`` of each,
    until null. Returns the count, -1 when ``out`` is too short, -2 on an address that cannot be a struct."""
    n = 0
    a = first
    while a != 0:
        if n == out.shape[0]:
            return -1
        if a < MEM_LO or a >= MEM_HI - 512 or a % 8 != 0:
            return -2
        out[n] = a
        n += 1
        a = m64[(a + next_off - MEM_LO) >> 3]
    return n


class _Memory:
    """Typed reads and writes at byte addresses through :func:`~.box2d_raw.memory`; the plural forms take an int64
    array of struct addresses and a field offset."""

    def __init__(self) -> None:
        self.m8, self.m32, self.mf, self.m64 = memory()

    def ptr(self, a: int) -> int:
        return int(self.m64[(a - MEM_LO) >> 3])

    def set_ptr(self, a: int, v: int) -> None:
        self.m64[(a - MEM_LO) >> 3] = v

    def i32(self, a: int) -> int:
        return int(self.m32[(a - MEM_LO) >> 2])

    def set_i32(self, a: int, v: int) -> None:
        self.m32[(a - MEM_LO) >> 2] = v

    def f32(self, a: int) -> float:
        return float(self.mf[(a - MEM_LO) >> 2])

    def u32(self, a: int) -> int:
        return int(self.m32[(a - MEM_LO) >> 2]) & 0xFFFFFFFF

    def ptrs(self, addrs: np.ndarray, off: int) -> np.ndarray:
        return self.m64[(addrs + (off - MEM_LO)) >> 3]

    def set_ptrs(self, addrs: np.ndarray, off: int, values: np.ndarray) -> None:
        self.m64[(addrs + (off - MEM_LO)) >> 3] = values

    def i32s(self, addrs: np.ndarray, off: int) -> np.ndarray:
        return self.m32[(addrs + (off - MEM_LO)) >> 2]

    def set_i32s(self, addrs: np.ndarray, off: int, values: np.ndarray) -> None:
        self.m32[(addrs + (off - MEM_LO)) >> 2] = values

    def read(self, a: int, n: int) -> np.ndarray:
        """A copy of the ``n`` bytes at ``a``."""
        return self.m8[a - MEM_LO:a - MEM_LO + n].copy()

    def write(self, a: int, data: np.ndarray) -> None:
        self.m8[a - MEM_LO:a - MEM_LO + len(data)] = data

    def gather(self, addrs: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """(n, len(cols)) uint8: the bytes at offsets ``cols`` of each struct at ``addrs``."""
        return self.m8[addrs[:, None] - MEM_LO + cols[None, :]]

    def scatter(self, addrs: np.ndarray, cols: np.ndarray, data: np.ndarray) -> None:
        self.m8[addrs[:, None] - MEM_LO + cols[None, :]] = data

    def chain(self, first: int, next_off: int) -> np.ndarray:
        """(n,) int64 addresses along a singly linked list (see :func:`_walk`)."""
        out = np.empty(64, dtype=np.int64)
        while True:
            n = _walk(self.m64, first, next_off, out)
            if n >= 0:
                return out[:n]
            if n == -2 or len(out) > 1 << 26:
                raise SnapshotError("unexpected Box2D memory contents while walking a list")
            out = np.empty(4 * len(out), dtype=np.int64)

    def link(self, head_at: int, nodes: np.ndarray, prev_off: int | None, next_off: int) -> None:
        """Make the list whose head pointer is at ``head_at`` hold ``nodes`` (int64 addresses) in this order, doubly
        linked when ``prev_off`` is given."""
        self.set_ptr(head_at, int(nodes[0]) if len(nodes) else 0)
        if not len(nodes):
            return
        zero = np.zeros(1, dtype=np.int64)
        self.set_ptrs(nodes, next_off, np.concatenate([nodes[1:], zero]))
        if prev_off is not None:
            self.set_ptrs(nodes, prev_off, np.concatenate([zero, nodes[:-1]]))


def _numbers(addrs: np.ndarray, query: np.ndarray, what: str) -> np.ndarray:
    """Index in ``addrs`` of each address of ``query`` (all must be there)."""
    order = np.argsort(addrs, kind="stable")
    pos = np.minimum(np.searchsorted(addrs[order], query), max(len(addrs) - 1, 0))
    if len(query) and (not len(addrs) or not np.array_equal(addrs[order][pos], query)):
        raise SnapshotError(f"unexpected Box2D memory contents: a {what} pointer that is not one of the world's")
    return order[pos] if len(query) else np.zeros(0, dtype=np.int64)


# ------------------------------------------------------------------------------------------------ walking a world
def _bodies(mem: _Memory, w: int) -> np.ndarray:
    return mem.chain(mem.ptr(w + W_BODY_LIST), B_NEXT)


def _fixtures(mem: _Memory, bodies: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every fixture (body order, then list order) and the (B + 1,) start of each body's."""
    lists = [mem.chain(mem.ptr(int(b) + B_FIXTURES), F_NEXT) for b in bodies]
    start = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
    return (np.concatenate(lists) if lists else np.zeros(0, dtype=np.int64)), start


_KEY_SEEDS = np.array([0xCBF29CE484222325, 0x84222325CBF29CE4], dtype=np.uint64)
_KEY_PRIMES = np.array([0x100000001B3, 0x9E3779B97F4A7C15], dtype=np.uint64)


@njit(cache=True)
def _hash_fixtures(m8: np.ndarray, m32: np.ndarray, m64: np.ndarray, fixtures: np.ndarray, signature: np.ndarray,
                   seeds: np.ndarray, primes: np.ndarray, out: np.ndarray) -> int:
    """``out[i]``: two 64-bit FNV-style digests of fixture i's :data:`FIXTURE_SIGNATURE` bytes and its shape's type,
    radius and centre (bytes 8..24) and polygon vertices. Returns 0, or -1 on a shape that is neither a circle nor a
    polygon of at most 16 vertices."""
    for i in range(fixtures.shape[0]):
        f = fixtures[i]
        shape = m64[(f + F_SHAPE - MEM_LO) >> 3]
        typ = m32[(shape + S_TYPE - MEM_LO) >> 2]
        n = 0
        if typ == SHAPE_POLYGON:
            n = m32[(shape + S_COUNT - MEM_LO) >> 2]
            if n < 0 or n > 16:
                return -1
        elif typ != SHAPE_CIRCLE:
            return -1
        for k in range(2):
            h = seeds[k]
            for j in range(signature.shape[0]):
                h = (h ^ np.uint64(m8[f + signature[j] - MEM_LO])) * primes[k]
            for j in range(S_TYPE, S_HEAD_END):
                h = (h ^ np.uint64(m8[shape + j - MEM_LO])) * primes[k]
            for j in range(n):  # one vertex (two float32) per word
                h = (h ^ np.uint64(m64[(shape + S_VERTICES + 8 * j - MEM_LO) >> 3])) * primes[k]
                h ^= h >> np.uint64(29)
            out[i, k] = h
    return 0


def _fixture_keys(mem: _Memory, fixtures: np.ndarray) -> np.ndarray:
    """(F, 2) uint64: a 128-bit digest of each fixture's contents, what tells it from the other fixtures of its
    body: its :data:`FIXTURE_SIGNATURE` bytes and its shape (type, radius, centre; a polygon's vertices)."""
    out = np.empty((len(fixtures), 2), dtype=np.uint64)
    if _hash_fixtures(mem.m8, mem.m32, mem.m64, fixtures, FIXTURE_SIGNATURE, _KEY_SEEDS, _KEY_PRIMES, out):
        raise SnapshotError("a Box2D fixture whose shape is neither a polygon nor a circle: not supported by "
                            "snapshots")
    return out


def _proxies(mem: _Memory, fixtures: np.ndarray) -> np.ndarray:
    """(F,) address of each fixture's (only) b2FixtureProxy, 0 when it has none (its body is inactive)."""
    counts = mem.i32s(fixtures, F_PROXY_COUNT)
    if (counts > 1).any():
        raise SnapshotError("a Box2D fixture with several proxies (chain shape): not supported by snapshots")
    return np.where(counts == 1, mem.ptrs(fixtures, F_PROXIES), 0)


def _edges(mem: _Memory, bodies: np.ndarray, list_off: int, items: np.ndarray, what: str) -> tuple[np.ndarray,
                                                                                                   np.ndarray]:
    """Each body's contact or joint list (``list_off``) as numbers (indices in ``items``, the contacts' or joints'
    addresses): (B + 1,) starts and the flat numbers."""
    lists = [_numbers(items, mem.ptrs(mem.chain(mem.ptr(int(b) + list_off), E_NEXT), E_PTR), what) for b in bodies]
    start = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
    return start, (np.concatenate(lists) if lists else np.zeros(0, dtype=np.int64))


def _check_layout() -> None:
    if not layout_ok():
        raise SnapshotError("exact snapshots need the raw view of Box2D's structs, and this Box2D build has another "
                            "memory layout (or MVSIM_BOX2D_RAW=0)")


# ------------------------------------------------------------------------------------------------ capture
def capture(b2world: Any, joints: Sequence[Any] = ()) -> Box2DState:
    """Everything ``b2world`` carries to its next step (see the module docstring).

    Args:
        b2world: the pybox2d world.
        joints: every joint of the world, in an order that :func:`restore` will be given again (how the joints are
            told apart).

    Raises:
        SnapshotError: the Box2D layout is not the expected one (:func:`layout_ok`), or the world holds a joint not
            in ``joints``, a joint type or a shape type snapshots do not support.
    """
    _check_layout()
    mem = _Memory()
    w = int(b2world.this)
    cm = w + W_CM
    bodies = _bodies(mem, w)
    fixtures, fstart = _fixtures(mem, bodies)
    proxies = _proxies(mem, fixtures)
    has = proxies != 0
    # broad phase
    cap = mem.i32(cm + T_CAPACITY)
    nodes_at = mem.ptr(cm + T_NODES)
    tree = mem.read(nodes_at, cap * NODE_SIZE).reshape(cap, NODE_SIZE)
    heights = tree[:, N_HEIGHT:N_HEIGHT + 4].copy().view(np.int32).ravel()
    leaves = np.full(cap, -1, dtype=np.int64)
    leaf = np.flatnonzero(heights == 0)
    users = mem.ptrs(nodes_at + NODE_SIZE * leaf.astype(np.int64), N_USER)
    leaves[leaf] = _numbers(fixtures, mem.ptrs(users, P_FIXTURE), "tree leaf")
    tree[:, N_USER:N_USER + 8] = 0
    moves = mem.read(mem.ptr(cm + BP_MOVE_BUFFER), 4 * mem.i32(cm + BP_MOVE_COUNT)).view(np.int32).copy()
    # contacts
    contacts = mem.chain(mem.ptr(cm + CM_CONTACT_LIST), C_NEXT)
    pairs = np.column_stack([_numbers(fixtures, mem.ptrs(contacts, C_FA), "contact fixture"),
                             _numbers(fixtures, mem.ptrs(contacts, C_FB), "contact fixture")])
    children = np.column_stack([mem.i32s(contacts, C_IA), mem.i32s(contacts, C_IB)]).astype(np.int32)
    cedge_start, cedges = _edges(mem, bodies, B_CONTACTS, contacts, "contact")
    # joints
    jaddr = np.array([int(j.this) for j in joints], dtype=np.int64)
    listed = mem.chain(mem.ptr(w + W_JOINT_LIST), J_NEXT)
    if len(listed) != len(jaddr) or not np.isin(listed, jaddr).all():
        raise SnapshotError("the joints given to the snapshot are not the Box2D world's joints")
    jtypes = mem.i32s(jaddr, J_TYPE).astype(np.int32)
    for t in jtypes.tolist():
        if t not in JOINT_STATE:
            raise SnapshotError(f"a Box2D joint of type {t}: snapshots support "
                                f"{', '.join(_JOINT_NAMES.values())} joints")
    jedge_start, jedges = _edges(mem, bodies, B_JOINTS, jaddr, "joint")
    return Box2DState(
        body_types=mem.i32s(bodies, B_TYPE).astype(np.int32),
        bodies=mem.gather(bodies, BODY_STATE),
        fixture_start=fstart,
        fixture_keys=_fixture_keys(mem, fixtures),
        proxy_ids=np.where(has, mem.i32s(np.where(has, proxies, fixtures), P_ID), -1).astype(np.int32),
        proxy_boxes=np.where(has[:, None], mem.gather(np.where(has, proxies, fixtures), np.arange(16)), 0),
        tree=tree,
        tree_leaves=leaves,
        tree_header=np.array([mem.i32(cm + off) for off in TREE_HEADER], dtype=np.int32),
        proxy_count=mem.i32(cm + BP_PROXY_COUNT),
        moves=moves,
        contact_fixtures=pairs.astype(np.int64).reshape(-1, 2),
        contact_children=children.reshape(-1, 2),
        contact_flags=mem.i32s(contacts, C_FLAGS).view(np.uint32).copy(),
        contacts=mem.gather(contacts, CONTACT_STATE),
        contact_edge_start=cedge_start,
        contact_edges=cedges,
        joint_types=jtypes,
        joint_bodies=np.column_stack([_numbers(bodies, mem.ptrs(jaddr, J_BODY_A), "joint body"),
                                      _numbers(bodies, mem.ptrs(jaddr, J_BODY_B), "joint body")]).reshape(-1, 2),
        joint_order=_numbers(jaddr, listed, "joint"),
        joints=[mem.gather(jaddr[i:i + 1], JOINT_STATE[t])[0] for i, t in enumerate(jtypes.tolist())],
        joint_edge_start=jedge_start,
        joint_edges=jedges,
        world_flags=mem.i32(w + W_FLAGS),
        inv_dt0=mem.u32(w + W_INV_DT0),
        step_complete=bool(mem.m8[w + W_STEP_COMPLETE - MEM_LO]),
    )


# ------------------------------------------------------------------------------------------------ restore
def _match_fixtures(mem: _Memory, fixtures: np.ndarray, fstart: np.ndarray, state: Box2DState) -> np.ndarray:
    """(F,) address here of each saved fixture: same body, same contents (:func:`_fixture_keys`).

    Raises:
        SnapshotError: a body does not hold the snapshot's fixtures."""
    if not np.array_equal(fstart, state.fixture_start):
        raise SnapshotError("the Box2D bodies do not have the snapshot's numbers of fixtures")
    keys = _fixture_keys(mem, fixtures)
    if np.array_equal(keys, state.fixture_keys):  # already in the saved order (a restore into the same world)
        return fixtures
    owner = np.repeat(np.arange(len(fstart) - 1), np.diff(fstart))
    here = np.lexsort((keys[:, 1], keys[:, 0], owner))
    saved = np.lexsort((state.fixture_keys[:, 1], state.fixture_keys[:, 0], owner))
    if not np.array_equal(keys[here], state.fixture_keys[saved]):
        bad = owner[saved][np.flatnonzero((keys[here] != state.fixture_keys[saved]).any(axis=1))[0]]
        raise SnapshotError(f"Box2D body {bad} does not hold the snapshot's fixtures (a shape, density, friction or "
                            f"filter differs)")
    out = np.empty(len(fixtures), dtype=np.int64)
    out[saved] = fixtures[here]
    return out


def restore(b2world: Any, state: Box2DState, joints: Sequence[Any] = ()) -> int:
    """Put ``b2world`` in the state :func:`capture` saw (see the module docstring).

    Args:
        b2world: a pybox2d world with the captured world's bodies (in the same order), fixtures (same contents, any
            order) and joints.
        state: from :func:`capture`; not changed.
        joints: the joints, in the order given to :func:`capture`.

    Returns:
        The number of contacts that could not be made again (fat boxes no longer overlapping; see the module
        docstring), usually 0.

    Raises:
        SnapshotError: the world does not hold the snapshot's bodies, fixtures or joints (the message says which
            part differs), or the layout is not the expected one. The world is unchanged then.
    """
    _check_layout()
    mem = _Memory()
    w = int(b2world.this)
    cm = w + W_CM
    cmgr = b2world.contactManager
    # -------- match bodies, fixtures and joints (nothing is written before all of them match)
    bodies = _bodies(mem, w)
    types = mem.i32s(bodies, B_TYPE)
    if len(bodies) != len(state.body_types) or not np.array_equal(types, state.body_types):
        raise SnapshotError(f"the Box2D world has {len(bodies)} bodies of types {types.tolist()}, the snapshot "
                            f"{len(state.body_types)} of types {state.body_types.tolist()}")
    fixtures, fstart = _fixtures(mem, bodies)
    fixture_at = _match_fixtures(mem, fixtures, fstart, state)  # saved fixture number -> address here
    proxies = _proxies(mem, fixture_at)
    has = proxies != 0
    if not np.array_equal(has, state.proxy_ids >= 0):
        raise SnapshotError("a Box2D body is active here and inactive in the snapshot, or the reverse")
    jaddr = np.array([int(j.this) for j in joints], dtype=np.int64)
    listed = mem.chain(mem.ptr(w + W_JOINT_LIST), J_NEXT)
    if (len(listed) != len(jaddr) or not np.isin(listed, jaddr).all()
            or not np.array_equal(mem.i32s(jaddr, J_TYPE), state.joint_types)
            or not np.array_equal(mem.ptrs(jaddr, J_BODY_A), bodies[state.joint_bodies[:, 0]])
            or not np.array_equal(mem.ptrs(jaddr, J_BODY_B), bodies[state.joint_bodies[:, 1]])):
        raise SnapshotError("the Box2D world does not hold the snapshot's joints")
    # -------- broad phase: the saved tree, each proxy at its saved leaf
    for c in b2world.contacts:
        cmgr.Destroy(c)
    _reserve_tree(b2world, mem, len(state.tree))
    nodes_at = mem.ptr(cm + T_NODES)
    mem.write(nodes_at, state.tree.ravel())
    leaf = np.flatnonzero(state.tree_leaves >= 0)
    mem.set_ptrs(nodes_at + NODE_SIZE * leaf.astype(np.int64), N_USER, proxies[state.tree_leaves[leaf]])
    mem.scatter(proxies[has], np.arange(16), state.proxy_boxes[has])
    mem.set_i32s(proxies[has], P_ID, state.proxy_ids[has])
    for off, v in zip(TREE_HEADER, state.tree_header.tolist(), strict=True):
        mem.set_i32(cm + off, v)
    mem.set_i32(cm + BP_PROXY_COUNT, state.proxy_count)
    # -------- contacts: Box2D's own pair search, from the proxies of the bodies that move, finds every overlapping
    # pair that can collide (a static body meets only moving ones); those the snapshot had not found yet go
    bp = cmgr.broadPhase
    mem.set_i32(cm + BP_MOVE_COUNT, 0)
    owner = np.repeat(np.arange(len(bodies)), np.diff(fstart))
    for pid in state.proxy_ids[has & (state.body_types[owner] != 0)].tolist():
        bp.TouchProxy(pid)
    cmgr.FindNewContacts()
    made = mem.chain(mem.ptr(cm + CM_CONTACT_LIST), C_NEXT)
    key_here = _numbers(fixture_at, mem.ptrs(made, C_FA), "contact fixture") * len(fixture_at) + _numbers(
        fixture_at, mem.ptrs(made, C_FB), "contact fixture")
    key_saved = state.contact_fixtures[:, 0] * len(fixture_at) + state.contact_fixtures[:, 1]
    extra = ~np.isin(key_here, key_saved)
    if extra.any():
        drop = set(made[extra].tolist())
        for c in b2world.contacts:
            if int(c.this) in drop:
                cmgr.Destroy(c)
    made, key_here = made[~extra], key_here[~extra]
    found = np.isin(key_saved, key_here)
    kept = np.flatnonzero(found)
    caddr = np.zeros(len(key_saved), dtype=np.int64)  # saved contact number -> address here (0: not made)
    caddr[kept] = made[_numbers(key_here, key_saved[kept], "contact")]
    if not np.array_equal(np.column_stack([mem.i32s(caddr[kept], C_IA), mem.i32s(caddr[kept], C_IB)]),
                          state.contact_children[kept]):
        raise SnapshotError("a Box2D contact came out with other child indices than in the snapshot")
    mem.link(cm + CM_CONTACT_LIST, caddr[kept], C_PREV, C_NEXT)
    mem.set_i32(cm + CM_CONTACT_COUNT, len(kept))
    mem.set_i32s(caddr[kept], C_FLAGS, state.contact_flags[kept].view(np.int32))
    mem.scatter(caddr[kept], CONTACT_STATE, state.contacts[kept])
    body_a = mem.ptrs(mem.ptrs(caddr[kept], C_FA), F_BODY)
    on_a = np.zeros(len(key_saved), dtype=np.bool_)
    for b, body in enumerate(bodies.tolist()):
        k = state.contact_edges[state.contact_edge_start[b]:state.contact_edge_start[b + 1]]
        k = k[found[k]]
        on_a[kept] = body_a == body
        mem.link(body + B_CONTACTS, caddr[k] + np.where(on_a[k], C_NODE_A, C_NODE_B), E_PREV, E_NEXT)
    # -------- joints, fixtures, bodies, world
    mem.link(w + W_JOINT_LIST, jaddr[state.joint_order], J_PREV, J_NEXT)
    for a, t, data in zip(jaddr.tolist(), state.joint_types.tolist(), state.joints, strict=True):
        mem.scatter(np.array([a], dtype=np.int64), JOINT_STATE[t], data[None, :])
    joint_body_a = mem.ptrs(jaddr, J_BODY_A)
    for b, body in enumerate(bodies.tolist()):
        j = state.joint_edges[state.joint_edge_start[b]:state.joint_edge_start[b + 1]]
        mem.link(body + B_JOINTS, jaddr[j] + np.where(joint_body_a[j] == body, J_EDGE_A, J_EDGE_B), E_PREV, E_NEXT)
        mem.link(body + B_FIXTURES, fixture_at[fstart[b]:fstart[b + 1]], None, F_NEXT)
    mem.scatter(bodies, BODY_STATE, state.bodies)
    mem.set_i32(cm + BP_MOVE_COUNT, 0)
    for pid in state.moves.tolist():
        bp.TouchProxy(pid)
    mem.set_i32(w + W_FLAGS, state.world_flags)
    mem.m32[(w + W_INV_DT0 - MEM_LO) >> 2] = np.uint32(state.inv_dt0).view(np.int32)
    mem.m8[w + W_STEP_COMPLETE - MEM_LO] = 1 if state.step_complete else 0
    return int(len(key_saved) - len(kept))


def _reserve_tree(b2world: Any, mem: _Memory, capacity: int) -> None:
    """Grow the broad phase's node array to at least ``capacity`` nodes (Box2D doubles it when it runs out of free
    nodes): proxies of a scratch body far away are made until it has, then the body is destroyed."""
    cm = int(b2world.this) + W_CM
    if mem.i32(cm + T_CAPACITY) >= capacity:
        return
    scratch = b2world.CreateStaticBody(position=(1e6, 1e6))
    try:
        while mem.i32(cm + T_CAPACITY) < capacity:
            scratch.CreatePolygonFixture(box=(0.5, 0.5))
    finally:
        b2world.DestroyBody(scratch)


# ------------------------------------------------------------------------------------------------ layout check
_layout: bool | None = None


def layout_ok() -> bool:
    """Whether this Box2D build has the struct layout above (checked once per process against the pybox2d API on a
    probe scene: bodies, contacts with impulses, every supported joint type, the broad phase)."""
    global _layout
    if _layout is None:
        try:
            _layout = _probe()
        except Exception:  # noqa: BLE001 - any surprise means: not this layout
            log.debug("Box2D layout probe failed", exc_info=True)
            _layout = False
        if not _layout:
            log.info("Box2D struct layout not recognised: exact world snapshots are not available")
    return _layout


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-5 * max(1.0, abs(b))


def _probe() -> bool:
    """Build a probe scene (a stack of boxes on the ground, a ball, every supported joint type), step it, and compare
    what the offsets read with what the pybox2d API says. Logs the first check that fails."""
    from mvsim_core.dynamics.box2d_raw import raw_layout_ok

    if not raw_layout_ok() or Box2D.b2Globals.b2_stackSize != 100 * 1024 or Box2D.b2Globals.b2_maxStackEntries != 32:
        return False
    mem = _Memory()
    world = Box2D.b2World(gravity=(0.75, -1.25), doSleep=True)
    ground = world.CreateStaticBody(position=(0.0, 0.0))
    ground.CreatePolygonFixture(box=(5.0, 0.5))
    boxes = []
    for k in range(3):  # a stack pressed on the ground: contacts with impulses
        b = world.CreateDynamicBody(position=(0.3 * k, 1.0 + 1.05 * k), angle=0.05 * k)
        b.CreatePolygonFixture(box=(0.5, 0.5), density=1.0 + k, friction=0.3)
        boxes.append(b)
    ball = world.CreateDynamicBody(position=(3.0, 1.2))
    ball.CreateCircleFixture(radius=0.4, density=1.0)
    idle = world.CreateDynamicBody(position=(20.0, 20.0), gravityScale=0.0)  # alone, awake: its sleep timer runs
    idle.CreatePolygonFixture(box=(0.5, 0.5), density=1.0)
    arm = world.CreateDynamicBody(position=(-3.0, 3.0))
    arm.CreatePolygonFixture(box=(1.0, 0.1), density=1.0)
    # a motor driving the arm against its upper limit: limit state 2 (e_atUpperLimit), a limit impulse
    rev = world.CreateRevoluteJoint(bodyA=ground, bodyB=arm, anchor=(-4.0, 3.0), enableLimit=True, lowerAngle=-0.05,
                                    upperAngle=0.05, enableMotor=True, motorSpeed=1.0, maxMotorTorque=5.0)
    dist = world.CreateDistanceJoint(bodyA=boxes[0], bodyB=ball, anchorA=boxes[0].position, anchorB=ball.position,
                                     frequencyHz=2.5, dampingRatio=0.25)
    fric = world.CreateFrictionJoint(bodyA=ground, bodyB=boxes[2], localAnchorA=(0.5, 3.0), localAnchorB=(0.0, 0.0),
                                     maxForce=3.5, maxTorque=1.5)
    rope = world.CreateRopeJoint(bodyA=ground, bodyB=ball, localAnchorA=(3.0, 2.0), localAnchorB=(0.0, 0.0),
                                 maxLength=0.5)
    joints = [rev, dist, fric, rope]
    dt = 1.0 / 64.0
    for _ in range(20):
        world.Step(dt, 8, 3)
    w = int(world.this)
    cm = w + W_CM
    bodies = world.bodies
    checks: list[tuple[str, bool]] = []

    def check(what: str, ok: Any) -> None:
        checks.append((what, bool(ok)))

    check("world lists", mem.ptr(w + W_BODY_LIST) == body_address(arm) and mem.i32(w + W_BODY_COUNT) == len(bodies)
          and mem.ptr(w + W_JOINT_LIST) == int(rope.this) and mem.i32(w + W_JOINT_COUNT) == len(joints))
    check("world scalars", mem.f32(w + W_INV_DT0) == np.float32(1.0 / dt) and mem.i32(w + W_FLAGS) == 4
          and mem.m8[w + W_STEP_COMPLETE - MEM_LO] == 1)
    walked = _bodies(mem, w)
    check("body list", sorted(walked) == sorted(body_address(b) for b in bodies))  # pybox2d lists them its own way
    for b in bodies:
        a = body_address(b)
        lc = b.localCenter
        check("body type, mass data, damping", mem.i32(a + B_TYPE) == b.type and _close(mem.f32(a + 144), b.mass)
              and _close(mem.f32(a + 152), b.inertia - b.mass * (lc[0] ** 2 + lc[1] ** 2))
              and _close(mem.f32(a + 168), b.gravityScale) and _close(mem.f32(a + 160), b.linearDamping))
    check("sleep time", mem.f32(body_address(ground) + 172) == 0.0
          and _close(mem.f32(body_address(idle) + 172), 20 * dt))
    fixtures, _ = _fixtures(mem, walked)
    check("fixture lists", sorted(fixtures) == sorted(int(f.this) for b in bodies for f in b.fixtures))
    bp = world.contactManager.broadPhase
    nodes_at = mem.ptr(cm + T_NODES)
    for b in bodies:
        for f in b.fixtures:
            fa = int(f.this)
            p = int(_proxies(mem, np.array([fa], dtype=np.int64))[0])
            pid = mem.i32(p + P_ID)
            fat = bp.GetFatAABB(pid)
            node = nodes_at + pid * NODE_SIZE
            check("proxy", mem.ptr(p + P_FIXTURE) == fa and mem.ptr(fa + F_BODY) == body_address(b))
            check("tree leaf", mem.ptr(node + N_USER) == p and mem.i32(node + N_HEIGHT) == 0 and all(
                _close(mem.f32(node + 4 * i), v) for i, v in enumerate((*fat.lowerBound, *fat.upperBound))))
            shape, s = f.shape, mem.ptr(fa + F_SHAPE)
            check("fixture and shape", mem.i32(s + S_TYPE) == shape.type and _close(mem.f32(s + 12), shape.radius)
                  and _close(mem.f32(fa + 32), f.friction) and _close(mem.f32(fa), f.density))
            if shape.type == SHAPE_POLYGON:
                verts = shape.vertices
                check("polygon", mem.i32(s + S_COUNT) == len(verts) and all(
                    _close(mem.f32(s + S_VERTICES + 8 * i), v[0]) and _close(mem.f32(s + S_VERTICES + 8 * i + 4), v[1])
                    for i, v in enumerate(verts)))
    check("broad phase", mem.i32(cm + BP_PROXY_COUNT) == world.proxyCount
          and mem.i32(cm + T_CAPACITY) >= mem.i32(cm + T_COUNT) > 0 and mem.i32(cm + BP_MOVE_COUNT) == 0)
    contacts = world.contacts
    check("contact list", sorted(mem.chain(mem.ptr(cm + CM_CONTACT_LIST), C_NEXT)) == sorted(int(c.this)
                                                                                             for c in contacts)
          and mem.i32(cm + CM_CONTACT_COUNT) == len(contacts))
    impulses = 0
    for c in contacts:
        a = int(c.this)
        m = c.manifold
        check("contact", mem.ptr(a + C_FA) == int(c.fixtureA.this) and mem.ptr(a + C_FB) == int(c.fixtureB.this)
              and bool(mem.u32(a + C_FLAGS) & 2) == c.touching and mem.i32(a + C_IA) == c.childIndexA
              and mem.i32(a + 120 + 60) == m.pointCount and _close(mem.f32(a + 192), c.friction))
        for i, pt in enumerate(m.points):
            check("manifold point", _close(mem.f32(a + 120 + 20 * i + 8), pt.normalImpulse)
                  and _close(mem.f32(a + 120 + 20 * i + 12), pt.tangentImpulse))
            impulses += pt.normalImpulse != 0.0
    check("some contact impulses", impulses > 0)
    for b in bodies:
        listed = sorted(int(e.contact.this) for e in b.contacts)
        walked_e = sorted(mem.ptr(e + E_PTR) for e in mem.chain(mem.ptr(body_address(b) + B_CONTACTS), E_NEXT))
        listed_j = sorted(int(e.joint.this) for e in b.joints)
        walked_j = sorted(mem.ptr(e + E_PTR) for e in mem.chain(mem.ptr(body_address(b) + B_JOINTS), E_NEXT))
        check("body edge lists", listed == walked_e and listed_j == walked_j)
    for j in joints:
        a = int(j.this)
        check("joint", mem.i32(a + J_TYPE) == j.type and mem.ptr(a + J_BODY_A) == body_address(j.bodyA)
              and mem.ptr(a + J_BODY_B) == body_address(j.bodyB))
    # the impulses through the reaction force and torque (inv_dt = 1); limits and limit states
    a = int(rev.this)
    f = rev.GetReactionForce(1.0)
    check("revolute", _close(mem.f32(a + 144), f[0]) and _close(mem.f32(a + 148), f[1])
          and _close(mem.f32(a + 152), rev.GetReactionTorque(1.0)) and _close(mem.f32(a + 156), rev.GetMotorTorque(1.0))
          and _close(mem.f32(a + 180), rev.lowerLimit) and _close(mem.f32(a + 184), rev.upperLimit)
          and _close(mem.f32(a + 168), rev.motorSpeed) and mem.i32(a + 284) == 2)
    a = int(dist.this)
    check("distance", _close(mem.f32(a + 128), dist.frequency) and _close(mem.f32(a + 164), dist.length)
          and _close(abs(mem.f32(a + 160)), math.hypot(*dist.GetReactionForce(1.0))))
    a = int(fric.this)
    f = fric.GetReactionForce(1.0)
    check("friction", _close(mem.f32(a + 144), f[0]) and _close(mem.f32(a + 148), f[1])
          and _close(mem.f32(a + 152), fric.GetReactionTorque(1.0)) and _close(mem.f32(a + 156), fric.maxForce))
    a = int(rope.this)
    check("rope", _close(mem.f32(a + 144), rope.maxLength) and mem.i32(a + 224) == rope.limitState
          and _close(abs(mem.f32(a + 152)), math.hypot(*rope.GetReactionForce(1.0))))
    check("some joint impulses", all(mem.f32(int(j.this) + o) != 0.0
                                     for j, o in ((rev, 152), (fric, 144), (rope, 152), (dist, 160))))
    failed = [what for what, ok in checks if not ok]
    if failed:
        log.debug("Box2D layout probe: %s failed", failed[0])
    return not failed
