"""The dynamics-class registry (``VehicleDynamics``): every class declares its controller family, whether it steers
and which wheels take a differential controller's left/right torques; ``from_string`` finds classes by name."""

from __future__ import annotations

import numpy as np
import pytest

from mvsim_core.dynamics.controllers.base import _DYNAMICS_FAMILY, Family
from mvsim_core.objects.vehicles import VehicleDynamics
from mvsim_core.objects.vehicles.base import WheelSide

CLASSES = list(VehicleDynamics.registry.items())
STEERED_FAMILIES = {Family.ACKERMANN, Family.ACKERMANN_DRIVETRAIN}


@pytest.mark.parametrize(("name", "cls"), CLASSES)
def test_from_string_round_trip(name, cls):
    assert cls.xml_class == name and VehicleDynamics.from_string(name) is cls


def test_from_string_unknown_lists_known():
    with pytest.raises(ValueError, match=r"^unknown dynamics class 'hovercraft'; known classes: ackermann, "
                                         r"ackermann_drivetrain, differential, differential_3_wheels, "
                                         r"differential_4_wheels$"):
        VehicleDynamics.from_string("hovercraft")


@pytest.mark.parametrize(("name", "cls"), CLASSES)
def test_family_agrees_with_the_controllers_mapping(name, cls):
    # controllers.base keeps its own dynamics class -> family table for Family.parse; both must say the same
    assert isinstance(cls.family, Family) and Family.parse(name) is cls.family


def test_controllers_mapping_names_exactly_the_registered_classes():
    assert set(_DYNAMICS_FAMILY) == set(VehicleDynamics.registry)


@pytest.mark.parametrize(("name", "cls"), CLASSES)
def test_steerable(name, cls):
    assert cls.steerable == (cls.family in STEERED_FAMILIES) == callable(getattr(cls, "steer", None))


@pytest.mark.parametrize(("name", "cls"), CLASSES)
def test_lr_pattern_has_one_entry_per_wheel(name, cls):
    if cls.family is not Family.DIFFERENTIAL:
        return
    assert len(cls.lr_pattern) == len(cls.wheel_slots)
    assert all(side is None or isinstance(side, WheelSide) for side in cls.lr_pattern)
    # the first two wheels are the left/right pair that odometry and the twist controllers use
    assert cls.lr_pattern[:2] == (WheelSide.LEFT, WheelSide.RIGHT)


def test_set_lr_torques_follows_lr_pattern():
    cls = VehicleDynamics.from_string("differential_3_wheels")
    dyn = cls(params={}, wheels=[])

    class Veh:
        torques = np.full(3, 9.0)

    dyn.set_lr_torques(Veh, -1.5, -2.5)
    assert Veh.torques.tolist() == [-1.5, -2.5, 0.0]


def test_wheel_side_letters():
    # the batch twist controller reads the sides by their letters
    assert WheelSide.LEFT == "l" and WheelSide.RIGHT == "r"
    assert (WheelSide.LEFT.pick(1.0, 2.0), WheelSide.RIGHT.pick(1.0, 2.0)) == (1.0, 2.0)


@pytest.mark.parametrize(("attrs", "words"), [
    ({}, "declares no controller family"),
    ({"family": Family.DIFFERENTIAL, "steerable": True}, "steerable must be True exactly when it has steer()"),
    ({"family": Family.ACKERMANN, "steer": lambda self, veh, a: None}, "steerable must be True"),
])
def test_inconsistent_declarations_are_refused_and_not_registered(attrs, words):
    before = dict(VehicleDynamics.registry)
    with pytest.raises(TypeError, match=words):
        type("Hover", (VehicleDynamics,), {"xml_class": "hover", **attrs})
    assert VehicleDynamics.registry == before
