"""Open and Torsen differential torque splits."""

from __future__ import annotations

import pytest

from mvsim_core.dynamics.differentials import DifferentialKind, open_split, torsen_split


def test_open_split():
    assert open_split(0.3) == (0.3, pytest.approx(0.7))


@pytest.mark.parametrize(("w1", "w2"), [(10.0, 10.0), (10.0, 14.9), (0.0, 5.0), (5.0, 0.0)])
def test_torsen_behaves_open_below_bias(w1, w2):
    assert torsen_split(w1, w2, 1.5, 0.5) == pytest.approx((0.5, 0.5))


def test_torsen_sends_torque_to_the_slower_shaft():
    # shaft 1 spins (ice), shaft 2 grips: delta = 30 - 1.5*10 = 15, D = 0.5
    f1, f2 = torsen_split(30.0, 10.0, 1.5, 0.5)
    assert (f1, f2) == pytest.approx((0.25 / 1.0, 0.75 / 1.0))
    g1, g2 = torsen_split(10.0, 30.0, 1.5, 0.5)
    assert (g1, g2) == pytest.approx((0.75, 0.25))
    assert f1 + f2 == pytest.approx(1.0)


def test_torsen_uses_magnitudes():
    assert torsen_split(-30.0, -10.0, 1.5, 0.5) == pytest.approx(torsen_split(30.0, 10.0, 1.5, 0.5))


# ---------------------------------------------------------------------- the kinds
@pytest.mark.parametrize("kind", list(DifferentialKind))
def test_kind_from_string_round_trip(kind):
    assert DifferentialKind.from_string(kind.value) is kind


def test_kind_from_string_unknown_lists_known():
    with pytest.raises(ValueError, match=r"^unknown differential 'limited_slip'; known: open, torsen$"):
        DifferentialKind.from_string("limited_slip")


@pytest.mark.parametrize(("w1", "w2"), [(30.0, 10.0), (10.0, 30.0), (0.0, 4.0), (-5.0, 7.0)])
def test_each_kind_carries_its_split(w1, w2):
    assert DifferentialKind.OPEN.split(w1, w2, 1.5, 0.3) == open_split(0.3)
    assert DifferentialKind.TORSEN.split(w1, w2, 1.5, 0.3) == torsen_split(w1, w2, 1.5, 0.3)
