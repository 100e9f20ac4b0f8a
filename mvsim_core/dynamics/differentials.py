"""Torque split of open and Torsen differentials (reference §1.11, seeds "Ackermann with Drivetrain").

A differential takes an input torque and passes fractions of it to two output shafts spinning at ω1, ω2 (rad/s).

An open differential splits its input torque by a fixed fraction ``split`` (shaft 1) and 1 − ``split`` (shaft 2). A
Torsen (torque-sensing) differential sends more torque to the slower shaft — the one with grip — when the faster one
spins more than ``bias`` times the slower:

    δ = max(|ω1|, |ω2|) − bias·min(|ω1|, |ω2|);  Δ = δ / max(|ω1|, |ω2|) if δ > 0 else 0
    faster shaft: split·(1 − Δ), slower shaft: (1 − split)·(1 + Δ) (mirrored when shaft 2 is faster),
    normalised to sum 1.

:class:`DifferentialKind` names the two kinds and carries the split of each.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum


def open_split(split: float) -> tuple[float, float]:
    """Fractions of the input torque for shafts 1 and 2 of an open differential."""
    return split, 1.0 - split


def torsen_split(w1: float, w2: float, bias: float, split: float) -> tuple[float, float]:
    """Fractions (sum 1) of the input torque for shafts 1 and 2 spinning at w1, w2 (rad/s)."""
    a1, a2 = abs(w1), abs(w2)
    if a1 == 0.0 or a2 == 0.0:
        return split, 1.0 - split
    fast, slow = max(a1, a2), min(a1, a2)
    delta = fast - bias * slow
    d = delta / fast if delta > 0.0 else 0.0
    if a1 > a2:
        f1, f2 = split * (1.0 - d), (1.0 - split) * (1.0 + d)
    else:
        f1, f2 = split * (1.0 + d), (1.0 - split) * (1.0 - d)
    total = f1 + f2
    return f1 / total, f2 / total


def _open(w1: float, w2: float, bias: float, split: float) -> tuple[float, float]:
    """:func:`open_split` with the signature of :func:`torsen_split` (spins and bias do not matter)."""
    return open_split(split)


class DifferentialKind(Enum):
    """Kind of a differential, by the prefix of ``<drivetrain type="...">`` (``open_*``, ``torsen_*``); each member
    carries its torque split (:meth:`split`)."""

    _split: Callable[[float, float, float, float], tuple[float, float]]

    OPEN = ("open", _open)
    TORSEN = ("torsen", torsen_split)

    def __new__(cls, name: str, split: Callable[[float, float, float, float], tuple[float, float]]) -> DifferentialKind:
        member = object.__new__(cls)
        member._value_ = name
        member._split = split
        return member

    @classmethod
    def from_string(cls, s: str) -> DifferentialKind:
        """The kind named ``s``.

        Raises:
            ValueError: unknown name; the message lists the known ones.
        """
        for k in cls:
            if k.value == s:
                return k
        raise ValueError(f"unknown differential '{s}'; known: {', '.join(k.value for k in cls)}")

    def split(self, w1: float, w2: float, bias: float, split: float) -> tuple[float, float]:
        """Fractions of the input torque for shafts 1 and 2 spinning at w1, w2 (rad/s); ``bias`` (≥ 1) matters to
        Torsen differentials only; ``split`` is the share of shaft 1 when both turn alike."""
        return self._split(w1, w2, bias, split)
