"""Raw access to Box2D's b2Body structs (mvsim_core.dynamics.box2d_raw), checked against the pybox2d API."""

from __future__ import annotations

import math

import Box2D
import numpy as np
import pytest

from mvsim_core.dynamics.box2d_raw import (
    MEM_LO,
    OFF_F,
    OFF_T,
    READ_COLS,
    apply_raw,
    body_address,
    memory,
    raw_layout_ok,
    read_raw_positions,
    read_raw_states,
)


@pytest.fixture
def world_and_bodies():
    if not raw_layout_ok():
        pytest.skip("this Box2D build has another b2Body layout")
    w = Box2D.b2World(gravity=(0, 0))
    bodies = []
    for k, (x, y, yaw) in enumerate(((1.0, -2.0, 0.4), (-3.0, 0.5, -2.0))):
        b = w.CreateDynamicBody(position=(x, y), angle=yaw)
        b.CreatePolygonFixture(box=(0.5, 0.25, (0.3, -0.1 * k), 0.2), density=1.0)  # COM off the origin
        b.linearVelocity = (0.7 - k, -0.3)
        b.angularVelocity = 0.9 + k
        bodies.append(b)
    return w, bodies


def struct_indices(bodies):
    base = (np.array([body_address(b) for b in bodies], dtype=np.int64) - MEM_LO) // 4
    return base, base[:, None] + READ_COLS[None, :], base + 1


def test_read_raw_states_gives_the_origin_states(world_and_bodies):
    _, bodies = world_and_bodies
    _, read_idx, _ = struct_indices(bodies)
    out = np.empty((len(bodies), 6))
    read_raw_states(memory()[2], read_idx, out)
    for b, row in zip(bodies, out, strict=True):
        vx, vy = b.GetLinearVelocityFromWorldPoint(b.position)
        want = (b.position.x, b.position.y, b.angle, vx, vy, b.angularVelocity)
        assert row == pytest.approx(want, abs=1e-6)
    assert math.hypot(*bodies[0].linearVelocity) != pytest.approx(math.hypot(*out[0, 3:5]), abs=1e-3)  # COM != origin


def test_read_raw_positions_are_the_origins_as_the_api_gives_them(world_and_bodies):
    _, bodies = world_and_bodies
    _, read_idx, _ = struct_indices(bodies)
    out = np.empty((len(bodies), 2))
    read_raw_positions(memory()[2], read_idx, out)
    assert out.tolist() == [list(b.position.tuple) for b in bodies]  # float32 -> float64, exactly


def test_apply_raw_adds_force_and_torque_only_when_all_are_awake(world_and_bodies):
    w, bodies = world_and_bodies
    base, _, flag_idx = struct_indices(bodies)
    _, i32, f32, _ = memory()
    dynamic = np.ones(len(bodies), dtype=bool)
    fx, fy, tq = np.array([1.5, -2.0]), np.array([0.25, 3.0]), np.array([-0.5, 4.0])
    bodies[1].awake = False
    assert not apply_raw(f32, i32, base, flag_idx, dynamic, fx, fy, tq)
    assert f32[base + OFF_F].tolist() == [0.0, 0.0] and f32[base + OFF_T].tolist() == [0.0, 0.0]  # nothing written
    bodies[1].awake = True
    assert not apply_raw(f32, i32, base, flag_idx, np.array([True, False]), fx, fy, tq)  # a static one
    assert apply_raw(f32, i32, base, flag_idx, dynamic, fx, fy, tq)
    assert apply_raw(f32, i32, base, flag_idx, dynamic, fx, fy, tq)  # adds up
    assert f32[base + OFF_F].tolist() == [3.0, -4.0] and f32[base + OFF_F + 1].tolist() == [0.5, 6.0]
    assert f32[base + OFF_T].tolist() == [-1.0, 8.0]
    # the same as ApplyForceToCenter / ApplyTorque on twins
    twins = []
    for b in bodies:
        t = w.CreateDynamicBody(position=b.position, angle=b.angle)
        t.CreatePolygonFixture(shape=b.fixtures[0].shape, density=1.0)
        t.linearVelocity, t.angularVelocity = b.linearVelocity, b.angularVelocity
        twins.append(t)
    for t, x, y, q in zip(twins, fx, fy, tq, strict=True):
        t.ApplyForceToCenter((2 * float(x), 2 * float(y)), True)
        t.ApplyTorque(2 * float(q), True)
    w.Step(0.01, 8, 3)
    for b, t in zip(bodies, twins, strict=True):
        assert tuple(b.linearVelocity) == pytest.approx(tuple(t.linearVelocity), abs=1e-9)
        assert b.angularVelocity == pytest.approx(t.angularVelocity, abs=1e-9)
