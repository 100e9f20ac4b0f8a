"""Physics: property regions override a friction parameter only for models that have it; steered vehicles are those
whose dynamics class is steerable."""

from __future__ import annotations

import mvsim_core as mv
from mvsim_core.dynamics.friction.base import P_CRR, P_MU


def region(name: str, value: float) -> str:
    return (f'<element class="property_region"><property_name>{name}</property_name><value_double>{value}'
            f'</value_double><x_min>-50</x_min><x_max>50</x_max><y_min>-50</y_min><y_max>50</y_max><z_min>-1</z_min>'
            f'<z_max>1</z_max></element>')


def test_mu_region_skips_models_without_mu_and_c_rr_region_applies_to_all(tmp_path):
    body = region("friction_mu", 0.25) + region("friction_C_rr", 0.04) + "".join(
        f'<vehicle name="{m}"><dynamics class="differential"/><friction class="{m}"/><init_pose>{3 * k} 0 0'
        f"</init_pose></vehicle>" for k, m in enumerate(("default", "wardiagnemma", "ellipse")))
    (tmp_path / "w.xml").write_text(f'<mvsim_world version="1.0">{body}</mvsim_world>')
    w = mv.load_world(tmp_path / "w.xml")
    w.step()
    p = w.start().physics.wheels.params
    assert list(p[:, P_MU]) == [0.25] * 4 + [0.0] * 2  # ellipse has no mu column value
    assert list(p[:, P_CRR]) == [0.04] * 6


def test_steered_vehicles_are_the_steerable_classes(tmp_path):
    classes = ("differential", "ackermann", "differential_4_wheels", "ackermann_drivetrain")
    body = "".join(f'<vehicle name="v{k}"><dynamics class="{c}"/><init_pose>{6 * k} 0 0</init_pose></vehicle>'
                   for k, c in enumerate(classes))
    (tmp_path / "w.xml").write_text(f'<mvsim_world version="1.0">{body}</mvsim_world>')
    w = mv.load_world(tmp_path / "w.xml")
    assert w.start().physics.steered == [1, 3]
