"""Exact Box2D snapshots (mvsim_core.dynamics.box2d_state): a scene of colliding bodies, every supported joint type
and a fixture rebuilt now and then, captured, restored into another b2World built the same way, goes on bit for bit.
"""

from __future__ import annotations

import math
import pickle
from typing import Any

import Box2D
import numpy as np
import pytest

from mvsim_core.dynamics import box2d_state
from mvsim_core.errors import SnapshotError

pytestmark = pytest.mark.skipif(not box2d_state.layout_ok(), reason="this Box2D build has another struct layout")

DT = 0.005


def build() -> tuple[Any, list[Any], list[Any]]:
    """Walls round a 12 m × 10 m box, 12 bodies (circles, two-piece polygons), four friction joints to the ground,
    a rope, a revolute with limits and a soft distance joint; no gravity (top-down, as the simulator)."""
    w = Box2D.b2World(gravity=(0, 0), doSleep=True)
    ground = w.CreateStaticBody(position=(0, 0))
    for x, y, hx, hy in ((0, -5, 6, 0.2), (0, 5, 6, 0.2), (-6, 0, 0.2, 5), (6, 0, 0.2, 5)):
        w.CreateStaticBody(position=(x, y)).CreatePolygonFixture(box=(hx, hy))
    rng = np.random.default_rng(3)
    bodies = []
    for k in range(12):
        b = w.CreateDynamicBody(position=tuple(rng.uniform(-4, 4, 2).tolist()), angle=float(rng.uniform(0, 3)),
                                linearDamping=0.1, angularDamping=0.2)
        if k % 3 == 0:
            b.CreateCircleFixture(radius=0.3, density=1, friction=0.4)
        else:
            b.CreatePolygonFixture(box=(0.4, 0.25), density=1, friction=0.4)
            b.CreatePolygonFixture(box=(0.1, 0.3, (0.3, 0), 0.2), density=2, friction=0.5)
        bodies.append(b)
    joints = [w.CreateFrictionJoint(bodyA=ground, bodyB=b, localAnchorA=tuple(b.position), localAnchorB=(0, 0),
                                    maxForce=2.0, maxTorque=0.5) for b in bodies[:4]]
    joints.append(w.CreateRopeJoint(bodyA=bodies[5], bodyB=bodies[6], localAnchorA=(0, 0), localAnchorB=(0, 0),
                                    maxLength=1.0))
    joints.append(w.CreateRevoluteJoint(bodyA=bodies[7], bodyB=bodies[8], anchor=tuple(bodies[7].position),
                                        enableLimit=True, lowerAngle=-0.3, upperAngle=0.3))
    joints.append(w.CreateDistanceJoint(bodyA=bodies[9], bodyB=bodies[10], anchorA=tuple(bodies[9].position),
                                        anchorB=tuple(bodies[10].position), frequencyHz=3, dampingRatio=0.3))
    return w, bodies, joints


def turn_box(bodies: list[Any], k: int) -> None:
    """Rebuild body 1's small box at a yaw that depends on ``k`` (as a steered wheel's box is rebuilt)."""
    b = bodies[1]
    b.DestroyFixture(next(f for f in b.fixtures if f.density == 2))
    b.CreatePolygonFixture(box=(0.1, 0.3, (0.3, 0), 0.2 + 0.01 * (k % 5)), density=2, friction=0.5)


def drive(w: Any, bodies: list[Any], first: int, n: int) -> np.ndarray:
    """Steps ``first``..``first + n - 1`` with a force and torque on every body; (n, bodies, 6) states after each."""
    out = []
    for k in range(first, first + n):
        for i, b in enumerate(bodies):
            a = 0.0035 * k + i
            b.ApplyForceToCenter((3 * math.cos(a), 3 * math.sin(1.3 * a)), True)
            b.ApplyTorque(0.2 * math.sin(a), True)
        if k % 37 == 0:
            turn_box(bodies, k)
        w.Step(DT, 8, 3)
        out.append([(*b.position, b.angle, *b.linearVelocity, b.angularVelocity) for b in bodies])
    return np.array(out)


@pytest.fixture(scope="module")
def captured() -> tuple[box2d_state.Box2DState, np.ndarray]:
    """The scene's state after 400 steps, and the 600 steps that follow."""
    w, bodies, joints = build()
    drive(w, bodies, 0, 400)
    state = box2d_state.capture(w, joints)
    return state, drive(w, bodies, 400, 600)


def test_the_snapshot_has_touching_contacts_and_joint_impulses(captured) -> None:
    state, _ = captured
    assert int((state.contact_flags & 2).astype(bool).sum()) >= 3
    assert any(np.any(data != 0) for data in state.joints)
    assert state.inv_dt0 == np.array(1.0 / np.float32(DT), dtype=np.float32).view(np.uint32)


@pytest.mark.parametrize("history", [0, 123])  # a world never stepped; one that went its own way
def test_a_restored_world_goes_on_bit_for_bit(captured, history: int) -> None:
    state, want = captured
    w, bodies, joints = build()
    drive(w, bodies, 0, history)
    turn_box(bodies, 370)  # the caller makes the fixtures those of the snapshot (steps 370..399 kept this one)
    assert box2d_state.restore(w, pickle.loads(pickle.dumps(state)), joints) == 0
    again = box2d_state.capture(w, joints)  # everything as captured: structs, lists, tree, impulses
    for name in ("bodies", "fixture_keys", "proxy_ids", "tree", "tree_leaves", "contact_fixtures", "contact_flags",
                 "contacts", "contact_edges", "joint_order", "joint_edges", "moves"):
        assert np.array_equal(getattr(again, name), getattr(state, name)), name
    assert all(np.array_equal(a, b) for a, b in zip(again.joints, state.joints, strict=True))
    assert np.array_equal(drive(w, bodies, 400, 600), want)


def test_other_fixtures_are_refused_and_nothing_is_written(captured) -> None:
    state, _ = captured
    w, bodies, joints = build()
    drive(w, bodies, 0, 50)
    turn_box(bodies, 1)  # not the snapshot's box
    before = box2d_state.capture(w, joints)
    with pytest.raises(SnapshotError, match="does not hold the snapshot's fixtures"):
        box2d_state.restore(w, state, joints)
    after = box2d_state.capture(w, joints)
    assert np.array_equal(after.bodies, before.bodies) and np.array_equal(after.contacts, before.contacts)


def test_other_bodies_or_joints_are_refused(captured) -> None:
    state, _ = captured
    w, bodies, joints = build()
    with pytest.raises(SnapshotError, match="joints"):
        box2d_state.restore(w, state, joints[:-1])
    w.CreateDynamicBody(position=(0, 0))
    with pytest.raises(SnapshotError, match="bodies"):
        box2d_state.restore(w, state, joints)
