"""Rotations and poses (:mod:`mvsim_core.geometry.rotations`, :mod:`mvsim_core.geometry.rotation_kernels`): known
matrices and quaternions, round trips, batched and compiled forms bit for bit against the scalar ones, gimbal lock,
and SE(3) / SE(2) pose composition."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mvsim_core.geometry import rotation_kernels as kern
from mvsim_core.geometry.rotations import (
    compose,
    compose2d,
    compose_rt,
    inverse2d,
    quaternion_from_rotation,
    quaternion_from_ypr,
    relative,
    rotation,
    rotation_entries,
    rotations,
    ypr_from_rotation,
    ypr_from_rotations,
)

RNG_SEED = 7


def random_angles(n: int, canonical: bool = True, seed: int = RNG_SEED) -> np.ndarray:
    """(n, 3) yaw, pitch, roll (rad): canonical ranges (|pitch| < π/2, |yaw|, |roll| < π) or anything in ±10 rad."""
    rng = np.random.default_rng(seed)
    if not canonical:
        return rng.uniform(-10.0, 10.0, (n, 3))
    return np.column_stack([rng.uniform(-math.pi, math.pi, n), rng.uniform(-1.55, 1.55, n),
                            rng.uniform(-math.pi, math.pi, n)])


def rz(a: float) -> np.ndarray:
    return np.array([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]])


def ry(a: float) -> np.ndarray:
    return np.array([[math.cos(a), 0.0, math.sin(a)], [0.0, 1.0, 0.0], [-math.sin(a), 0.0, math.cos(a)]])


def rx(a: float) -> np.ndarray:
    return np.array([[1.0, 0.0, 0.0], [0.0, math.cos(a), -math.sin(a)], [0.0, math.sin(a), math.cos(a)]])


def quat_matrix(x: float, y: float, z: float, w: float) -> np.ndarray:
    """Rotation matrix of a unit quaternion (x, y, z, w)."""
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def same_trig_as_math(values: np.ndarray) -> bool:
    """Whether numpy's cos/sin give libm's floats for these values (true on the supported platforms)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    return (np.array_equal(np.cos(v), [math.cos(x) for x in v])
            and np.array_equal(np.sin(v), [math.sin(x) for x in v]))


# ---------------------------------------------------------------------------------- yaw, pitch, roll -> matrix
@pytest.mark.parametrize(("ypr", "expected"), [
    ((math.pi / 2, 0.0, 0.0), [[0, -1, 0], [1, 0, 0], [0, 0, 1]]),   # yaw 90°: x -> y
    ((0.0, math.pi / 2, 0.0), [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]),   # pitch 90°: x -> -z (nose down)
    ((0.0, 0.0, math.pi / 2), [[1, 0, 0], [0, 0, -1], [0, 1, 0]]),   # roll 90°: y -> z (left side up)
    ((0.0, 0.0, 0.0), np.eye(3)),
    ((math.pi, 0.0, 0.0), [[-1, 0, 0], [0, -1, 0], [0, 0, 1]]),
])
def test_known_matrices(ypr, expected):
    np.testing.assert_allclose(rotation(*ypr), np.array(expected, dtype=float), rtol=0, atol=1e-15)
    np.testing.assert_allclose(rotations(*ypr)[0], np.array(expected, dtype=float), rtol=0, atol=1e-15)


def test_identity_is_exact():
    np.testing.assert_array_equal(rotation(0.0, 0.0, 0.0), np.eye(3))
    assert rotation(0.0, 0.0, 0.0).dtype == np.float64 and rotation(0.0, 0.0, 0.0).shape == (3, 3)


def test_matrix_is_rz_ry_rx():
    for yaw, pitch, roll in random_angles(50, canonical=False):
        np.testing.assert_allclose(rotation(yaw, pitch, roll), rz(yaw) @ ry(pitch) @ rx(roll), rtol=0, atol=1e-15)


def test_sign_conventions():
    """Positive pitch turns +x downwards; positive roll raises +y (MRPT, as the terrain fit relies on)."""
    assert (rotation(0.0, 0.2, 0.0) @ [1.0, 0.0, 0.0])[2] == pytest.approx(-math.sin(0.2), abs=1e-16)
    assert (rotation(0.0, 0.0, 0.3) @ [0.0, 1.0, 0.0])[2] == pytest.approx(math.sin(0.3), abs=1e-16)
    assert (rotation(0.4, 0.0, 0.0) @ [1.0, 0.0, 0.0])[:2] == pytest.approx((math.cos(0.4), math.sin(0.4)))


def test_orthonormal_with_unit_determinant():
    a = random_angles(200, canonical=False)
    for r in [rotation(*v) for v in a] + list(rotations(a[:, 0], a[:, 1], a[:, 2])):
        np.testing.assert_allclose(r @ r.T, np.eye(3), rtol=0, atol=1e-15)
        assert np.linalg.det(r) == pytest.approx(1.0, abs=1e-15)


def test_entries_are_the_matrix_row_major():
    for v in random_angles(100, canonical=False):
        e = rotation_entries(*v)
        assert len(e) == 9 and all(type(x) is float for x in e)
        np.testing.assert_array_equal(np.array(e), rotation(*v).ravel())


def test_batched_equals_scalar_bit_for_bit():
    a = random_angles(500, canonical=False)
    batched = rotations(a[:, 0], a[:, 1], a[:, 2])
    scalar = np.array([rotation(*v) for v in a])
    assert batched.shape == (500, 3, 3) and batched.dtype == np.float64
    np.testing.assert_allclose(batched, scalar, rtol=0, atol=1e-15)
    assert same_trig_as_math(a), "numpy's cos/sin differ from libm's on this platform"
    np.testing.assert_array_equal(batched, scalar)


def test_batched_accepts_scalars_lists_and_broadcasts_length_one():
    np.testing.assert_array_equal(rotations(0.3, -0.2, 0.1), rotation(0.3, -0.2, 0.1)[None])
    np.testing.assert_array_equal(rotations([0.3], [-0.2], [0.1]), rotation(0.3, -0.2, 0.1)[None])
    yaw = np.array([0.0, 1.0, -2.0])
    r = rotations(yaw, 0.25, np.zeros(3))
    np.testing.assert_array_equal(r, np.array([rotation(y, 0.25, 0.0) for y in yaw]))
    assert rotations(np.zeros(0), np.zeros(0), np.zeros(0)).shape == (0, 3, 3)


def test_compiled_entries_equal_numpy_bit_for_bit():
    a = np.vstack([random_angles(300, canonical=False),
                   [[0.0, 0.0, 0.0], [-0.0, -0.0, -0.0], [math.pi, math.pi / 2, -math.pi], [1e3, -1e3, 1e4],
                    [1e-300, -1e-300, 5e-324]]])
    for v in a:
        assert kern.rotation_entries(v[0], v[1], v[2]) == rotation_entries(*v)
        assert kern.rotation_terms(*(f(x) for x in v for f in (math.cos, math.sin))) == rotation_entries(*v)


def test_compiled_entries_inside_a_kernel():
    """A kernel that calls the shared helper gets the numpy floats (here: rotated points, same expression order)."""
    from numba import njit

    from mvsim_core.jit import dispatcher

    entries = dispatcher(kern.rotation_entries)  # your own numba code calls the dispatcher, not the built function

    @njit
    def rotate(ang, pts, out):
        for i in range(ang.shape[0]):
            r00, r01, r02, r10, r11, r12, r20, r21, r22 = entries(ang[i, 0], ang[i, 1], ang[i, 2])
            x, y, z = pts[i, 0], pts[i, 1], pts[i, 2]
            out[i, 0] = r00 * x + r01 * y + r02 * z
            out[i, 1] = r10 * x + r11 * y + r12 * z
            out[i, 2] = r20 * x + r21 * y + r22 * z

    a = random_angles(200, canonical=False)
    pts = np.random.default_rng(1).normal(0.0, 5.0, (200, 3))
    out = np.empty((200, 3))
    rotate(a, pts, out)
    expected = np.empty((200, 3))
    for i, (v, (x, y, z)) in enumerate(zip(a, pts, strict=True)):
        r = rotation(*v)
        expected[i] = [r[k, 0] * x + r[k, 1] * y + r[k, 2] * z for k in range(3)]
    np.testing.assert_array_equal(out, expected)


# ---------------------------------------------------------------------------------- matrix -> yaw, pitch, roll
def test_ypr_round_trip_in_canonical_ranges():
    for v in random_angles(300):
        assert ypr_from_rotation(rotation(*v)) == pytest.approx(tuple(v), abs=1e-12)


def test_ypr_of_any_angles_gives_the_same_rotation():
    for v in random_angles(300, canonical=False):
        r = rotation(*v)
        yaw, pitch, roll = ypr_from_rotation(r)
        assert -math.pi <= yaw <= math.pi and -math.pi / 2 <= pitch <= math.pi / 2 and -math.pi <= roll <= math.pi
        np.testing.assert_allclose(rotation(yaw, pitch, roll), r, rtol=0, atol=1e-14)


def test_ypr_known_values():
    assert ypr_from_rotation(np.eye(3)) == (0.0, 0.0, 0.0)
    assert ypr_from_rotation(rz(math.pi / 2)) == pytest.approx((math.pi / 2, 0.0, 0.0), abs=1e-16)
    assert ypr_from_rotation(ry(-0.3)) == pytest.approx((0.0, -0.3, 0.0), abs=1e-16)
    assert ypr_from_rotation(rx(2.5)) == pytest.approx((0.0, 0.0, 2.5), abs=1e-15)


def test_batched_ypr_matches_scalar():
    a = random_angles(300, canonical=False)
    r = rotations(a[:, 0], a[:, 1], a[:, 2])
    yaw, pitch, roll = ypr_from_rotations(r)
    assert yaw.shape == pitch.shape == roll.shape == (300,)
    scalar = np.array([ypr_from_rotation(m) for m in r])
    np.testing.assert_allclose(np.column_stack([yaw, pitch, roll]), scalar, rtol=0, atol=1e-15)


@pytest.mark.parametrize("pitch", [math.pi / 2, -math.pi / 2])
def test_gimbal_lock_from_float_angles_is_recovered(pitch):
    """cos(±π/2) in floats is 6.1e-17, not 0: the matrix still holds yaw and roll, and they come back."""
    yaw, p, roll = ypr_from_rotation(rotation(0.7, pitch, -0.4))
    assert (yaw, p, roll) == pytest.approx((0.7, pitch, -0.4), abs=1e-15)


def test_gimbal_lock_exact_matrix_loses_yaw_and_roll():
    """x axis exactly vertical: only roll − yaw (pitch +π/2) or roll + yaw (pitch −π/2) is defined; yaw = roll = 0
    come back (atan2(0, 0)), which reproduce the matrix only when that difference / sum is 0."""
    s, c = math.sin(0.5), math.cos(0.5)
    up = np.array([[0.0, s, c], [0.0, c, -s], [-1.0, 0.0, 0.0]])  # pitch +π/2, roll − yaw = 0.5
    assert ypr_from_rotation(up) == (0.0, math.pi / 2, 0.0)
    assert np.abs(rotation(0.0, math.pi / 2, 0.0) - up).max() > 0.4  # the 0.5 is lost
    np.testing.assert_allclose(rotation(0.2, math.pi / 2, 0.7), up, rtol=0, atol=1e-15)  # any roll − yaw = 0.5
    down = np.array([[0.0, -s, -c], [0.0, c, -s], [1.0, 0.0, 0.0]])  # pitch −π/2, roll + yaw = 0.5
    assert ypr_from_rotation(down) == (0.0, -math.pi / 2, 0.0)
    np.testing.assert_allclose(rotation(0.2, -math.pi / 2, 0.3), down, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(rotation(*ypr_from_rotation(rotation(0.0, math.pi / 2, 0.0))),
                                  rotation(0.0, math.pi / 2, 0.0))


# ---------------------------------------------------------------------------------- quaternions
def test_quaternion_known_values():
    q = quaternion_from_ypr(math.pi, 0.0, 0.0)  # 180° about z
    assert q[:3] == (0.0, 0.0, 1.0) and q[3] == pytest.approx(0.0, abs=1e-16)
    q = quaternion_from_rotation(rotation(math.pi, 0.0, 0.0))
    assert q[:3] == (0.0, 0.0, 1.0) and 0.0 <= q[3] < 1e-16
    assert quaternion_from_rotation(np.diag([-1.0, -1.0, 1.0])) == (0.0, 0.0, 1.0, 0.0)
    assert quaternion_from_rotation(np.diag([1.0, -1.0, -1.0])) == (1.0, 0.0, 0.0, 0.0)
    assert quaternion_from_rotation(np.diag([-1.0, 1.0, -1.0])) == (0.0, 1.0, 0.0, 0.0)
    assert quaternion_from_rotation(np.eye(3)) == (0.0, 0.0, 0.0, 1.0)
    h = math.sqrt(0.5)
    assert quaternion_from_ypr(math.pi / 2, 0.0, 0.0) == pytest.approx((0.0, 0.0, h, h), abs=1e-15)
    assert quaternion_from_ypr(0.0, math.pi / 2, 0.0) == pytest.approx((0.0, h, 0.0, h), abs=1e-15)
    assert quaternion_from_ypr(0.0, 0.0, math.pi / 2) == pytest.approx((h, 0.0, 0.0, h), abs=1e-15)
    assert quaternion_from_rotation(rotation(0.0, 0.0, math.pi / 2)) == pytest.approx((h, 0.0, 0.0, h), abs=1e-15)


@pytest.mark.parametrize("ypr", [(0.3, 0.0, 0.0), (-2.5, 0.4, -0.7), (math.pi, -1.2, 2.9), (1.0, 0.0, 1.5)])
def test_quaternion_matches_rotation(ypr):
    q = quaternion_from_ypr(*ypr)
    assert sum(v * v for v in q) == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(quat_matrix(*q), rotation(*ypr), rtol=0, atol=1e-15)
    q2 = quaternion_from_rotation(rotation(*ypr))
    np.testing.assert_allclose(quat_matrix(*q2), rotation(*ypr), rtol=0, atol=1e-15)
    assert q2[3] >= 0.0


def test_quaternion_round_trip_and_w_not_negative():
    for v in random_angles(300, canonical=False):
        r = rotation(*v)
        q = quaternion_from_rotation(r)
        assert q[3] >= 0.0 and all(type(x) is float for x in q)
        assert math.fsum(x * x for x in q) == pytest.approx(1.0, abs=1e-15)
        np.testing.assert_allclose(quat_matrix(*q), r, rtol=0, atol=1e-15)
        qy = quaternion_from_ypr(*v)  # the same rotation, up to the sign
        sign = 1.0 if qy[3] >= 0.0 else -1.0
        assert q == pytest.approx(tuple(sign * x for x in qy), abs=1e-15)


def test_quaternion_from_rotation_flips_to_w_not_negative():
    """yaw 4 rad: the half-angle quaternion has w = cos(2) < 0; the matrix one is its negative."""
    qy = quaternion_from_ypr(4.0, 0.0, 0.0)
    assert qy[3] == pytest.approx(math.cos(2.0)) and qy[3] < 0.0
    q = quaternion_from_rotation(rotation(4.0, 0.0, 0.0))
    assert q == pytest.approx(tuple(-x for x in qy), abs=1e-15) and q[3] > 0.0


@pytest.mark.parametrize(("axis", "branch_diag"), [
    (None, "trace"), ((1.0, 0.0, 0.0), 0), ((0.0, 1.0, 0.0), 1), ((0.0, 0.0, 1.0), 2)])
def test_quaternion_every_shepperd_branch(axis, branch_diag):
    """Near-180° turns about x, y, z pick the r00, r11, r22 branches; a small turn the trace branch."""
    angle = 0.3 if axis is None else 3.0
    k = np.array((0.2, -0.5, 0.8) if axis is None else axis)
    k = k / np.linalg.norm(k)
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    r = np.eye(3) + math.sin(angle) * kx + (1.0 - math.cos(angle)) * (kx @ kx)
    d = np.diag(r)
    if branch_diag == "trace":
        assert d.sum() > 0.0
    else:
        assert d.sum() <= 0.0 and int(np.argmax(d)) == branch_diag
    q = quaternion_from_rotation(r)
    expected = (*(math.sin(angle / 2) * k), math.cos(angle / 2))
    assert q == pytest.approx(expected, abs=1e-15)
    np.testing.assert_allclose(quat_matrix(*q), r, rtol=0, atol=1e-15)


def test_quaternion_normalize():
    r = rotation(0.4, -1.1, 2.2) * (1.0 + 1e-9)  # slightly off a rotation: the quaternion is not unit
    q = quaternion_from_rotation(r)
    qn = quaternion_from_rotation(r, normalize=True)
    assert abs(math.fsum(x * x for x in q) - 1.0) > 1e-10
    assert math.fsum(x * x for x in qn) == pytest.approx(1.0, abs=1e-15)
    v = np.array(q)
    np.testing.assert_array_equal(np.array(qn), v / np.linalg.norm(v))
    assert qn[3] >= 0.0


# ---------------------------------------------------------------------------------- SE(3) poses
def test_compose_and_relative_known_value():
    a = (1.0, 2.0, 0.0, math.pi / 2, 0.0, 0.0)
    b = (1.0, 0.0, 0.5, 0.1, 0.0, 0.0)
    c = compose(a, b)
    assert c == pytest.approx((1.0, 3.0, 0.5, math.pi / 2 + 0.1, 0.0, 0.0), abs=1e-15)
    assert relative(a, c) == pytest.approx(b, abs=1e-15)
    r, t = compose_rt(a, b)
    np.testing.assert_allclose(r, rotation(math.pi / 2 + 0.1, 0.0, 0.0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(t, [1.0, 3.0, 0.5], rtol=0, atol=1e-15)


def test_compose_forms_agree():
    poses = np.column_stack([np.random.default_rng(3).normal(0.0, 3.0, (100, 3)), random_angles(100)])
    for a, b in zip(poses[:50], poses[50:], strict=True):
        r, t = compose_rt(a, b)
        c = compose(a, b)
        assert all(type(x) is float for x in c)
        assert c[:3] == tuple(t) and c[3:] == ypr_from_rotation(r)
        np.testing.assert_array_equal(r, rotation(*a[3:]) @ rotation(*b[3:]))
        np.testing.assert_array_equal(t, a[:3] + rotation(*a[3:]) @ b[:3])
        # a point of b's frame lands where going through a's frame puts it
        p = np.array([0.3, -1.2, 2.0])
        np.testing.assert_allclose(r @ p + t, rotation(*a[3:]) @ (rotation(*b[3:]) @ p + b[:3]) + a[:3], atol=1e-12)


def test_compose_then_relative_is_identity():
    rng = np.random.default_rng(5)
    poses = np.column_stack([rng.normal(0.0, 10.0, (200, 3)), random_angles(200, seed=11)])
    for a, b in zip(poses[:100], poses[100:], strict=True):
        assert relative(a, compose(a, b)) == pytest.approx(tuple(b), abs=1e-12)
        assert compose(a, relative(a, b)) == pytest.approx(tuple(b), abs=1e-12)
        assert relative(a, a) == pytest.approx((0.0,) * 6, abs=1e-12)


# ---------------------------------------------------------------------------------- SE(2) poses
def test_se2_known_values():
    assert compose2d((1.0, 2.0, math.pi / 2), (1.0, 0.0, 0.0)) == pytest.approx((1.0, 3.0, math.pi / 2), abs=1e-15)
    assert compose2d((0.0, 0.0, 3.0), (0.0, 0.0, 0.5)) == pytest.approx((0.0, 0.0, 3.5 - 2.0 * math.pi))
    assert compose2d((0.0, 0.0, 0.0), (0.0, 0.0, math.pi))[2] == pytest.approx(-math.pi)  # wrapped to [−π, π)
    assert inverse2d((1.0, 0.0, math.pi / 2)) == pytest.approx((0.0, 1.0, -math.pi / 2), abs=1e-15)
    assert inverse2d((2.0, -1.0, 0.0)) == (-2.0, 1.0, -0.0)


def test_se2_compose_and_inverse():
    a, b = (1.0, 2.0, 0.5), (-0.3, 0.7, 2.0)
    c = compose2d(a, b)
    assert compose2d(c, inverse2d(b)) == pytest.approx(a, abs=1e-15)
    assert compose2d(a, inverse2d(a)) == pytest.approx((0.0, 0.0, 0.0), abs=1e-15)
    assert compose2d(inverse2d(a), a) == pytest.approx((0.0, 0.0, 0.0), abs=1e-15)
    rng = np.random.default_rng(2)
    for _ in range(100):
        p = (*rng.normal(0.0, 5.0, 2), rng.uniform(-math.pi, math.pi))
        q = (*rng.normal(0.0, 5.0, 2), rng.uniform(-math.pi, math.pi))
        c = compose2d(p, q)
        assert -math.pi <= c[2] < math.pi
        back = compose2d(inverse2d(p), c)
        assert back[:2] == pytest.approx(q[:2], abs=1e-12)
        assert math.remainder(back[2] - q[2], 2.0 * math.pi) == pytest.approx(0.0, abs=1e-12)


def test_se2_is_planar_se3():
    rng = np.random.default_rng(4)
    for _ in range(50):
        a = (*rng.normal(0.0, 5.0, 2), rng.uniform(-math.pi, math.pi))
        b = (*rng.normal(0.0, 5.0, 2), rng.uniform(-math.pi, math.pi))
        c2 = compose2d(a, b)
        c3 = compose((a[0], a[1], 0.0, a[2], 0.0, 0.0), (b[0], b[1], 0.0, b[2], 0.0, 0.0))
        assert (c3[0], c3[1], c3[2]) == pytest.approx((c2[0], c2[1], 0.0), abs=1e-12)
        assert math.remainder(c3[3] - c2[2], 2.0 * math.pi) == pytest.approx(0.0, abs=1e-12)
        inv = inverse2d(a)
        assert relative((a[0], a[1], 0.0, a[2], 0.0, 0.0), (0.0,) * 6)[:2] == pytest.approx(inv[:2], abs=1e-12)
