"""Differential dynamics classes (§1.11): differential, differential_3_wheels, differential_4_wheels — wheel names,
order and default positions, chassis defaults, missing-wheel warnings."""

from __future__ import annotations

import pytest

from mvsim_core.dynamics.controllers.base import Family
from mvsim_core.objects.vehicles.base import VehicleDynamics
from mvsim_core.objects.vehicles.differential import Differential
from mvsim_core.objects.vehicles.differential_3_wheels import Differential3Wheels
from mvsim_core.objects.vehicles.differential_4_wheels import Differential4Wheels

CHASSIS = [[-0.4, -0.5], [-0.4, 0.5], [0.4, 0.5], [0.6, 0.3], [0.6, -0.3], [0.4, -0.5]]
WHEELS = {
    "differential": [("l_wheel", 0.0, 0.5), ("r_wheel", 0.0, -0.5)],
    "differential_3_wheels": [("l_wheel", 0.0, 0.5), ("r_wheel", 0.0, -0.5), ("caster_wheel", 0.5, 0.0)],
    "differential_4_wheels": [("lr_wheel", 0.0, 0.5), ("rr_wheel", 0.0, -0.5), ("lf_wheel", 0.5, 0.5),
                              ("rf_wheel", 0.5, -0.5)],
}


def test_registry():
    for name, cls in [("differential", Differential), ("differential_3_wheels", Differential3Wheels),
                      ("differential_4_wheels", Differential4Wheels)]:
        assert VehicleDynamics.registry[name] is cls and cls.family is Family.DIFFERENTIAL


@pytest.mark.parametrize("dclass", list(WHEELS))
def test_defaults(load, dclass):
    w = load(f'<vehicle name="v">\n<dynamics class="{dclass}"/><init_pose>0 0 0</init_pose></vehicle>')
    v = w.vehicles["v"]
    assert v.dynamics.xml_class == dclass and type(v.dynamics).family is Family.DIFFERENTIAL
    assert [(x.name, x.x, x.y) for x in v.wheels] == WHEELS[dclass]
    assert all((x.mass, x.diameter, x.inertia) == (2.0, 0.4, pytest.approx(0.04)) for x in v.wheels)
    c = v.chassis
    assert (c.mass, c.zmin, c.zmax, c.color) == (15.0, 0.05, 0.6, (255, 0, 0, 255))
    assert c.footprint.tolist() == CHASSIS and v.controller.xml_class == "raw" and dict(v.dynamics.params) == {}
    assert w.warnings == [f'{w.path}:3: <dynamics class="{dclass}"> has no <{n}>; using the default wheel'
                          for n, _, _ in WHEELS[dclass]]


def test_explicit_wheels_keep_slot_order(load):
    v = load('<vehicle name="v"><dynamics class="differential_4_wheels">'
             '<rf_wheel pos="0.3 -0.25" mass="3"/><lf_wheel pos="0.3 0.25"/><rr_wheel pos="-0.3 -0.25"/>'
             '<lr_wheel pos="-0.3 0.25 10" diameter="0.3"/><chassis mass="40"/></dynamics>'
             "<init_pose>0 0 0</init_pose></vehicle>").vehicles["v"]
    assert [(x.name, x.x, x.y) for x in v.wheels] == [("lr_wheel", -0.3, 0.25), ("rr_wheel", -0.3, -0.25),
                                                      ("lf_wheel", 0.3, 0.25), ("rf_wheel", 0.3, -0.25)]
    assert v.wheels[3].mass == 3.0 and v.wheels[0].inertia == pytest.approx(0.5 * 2 * 0.15 ** 2)
    assert v.chassis.mass == 40.0 and (v.chassis.zmin, v.chassis.zmax) == (0.05, 0.6)  # others keep defaults


def test_tags_of_other_classes_are_unknown(load):
    w = load('<vehicle name="v"><dynamics class="differential"><l_wheel/><r_wheel/>\n<caster_wheel/>\n'
             "<max_steer_ang_deg>30</max_steer_ang_deg></dynamics><init_pose>0 0 0</init_pose></vehicle>")
    assert len(w.vehicles["v"].wheels) == 2
    assert w.warnings == [f'{w.path}:3: unknown tag <caster_wheel> in <dynamics class="differential"> is ignored',
                          f'{w.path}:4: unknown tag <max_steer_ang_deg> in <dynamics class="differential"> is '
                          "ignored"]
