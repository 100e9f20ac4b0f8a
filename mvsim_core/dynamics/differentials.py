"""Torque split of open and Torsen differentials (reference §1.11, seeds "Ackermann with Drivetrain").

An open differential splits its input torque by a fixed fraction. A Torsen (torque-sensing) differential sends more
torque to the slower shaft — the one with grip — when the faster one spins more than ``bias`` times the slower:

    δ = max(|ω1|, |ω2|) − bias·min(|ω1|, |ω2|);  Δ = δ / max(|ω1|, |ω2|) if δ > 0 else 0
    faster shaft: split·(1 − Δ), slower shaft: (1 − split)·(1 + Δ) (mirrored when shaft 2 is faster),
    normalised to sum 1.
"""

from __future__ import annotations


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
