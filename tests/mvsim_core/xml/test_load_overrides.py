"""Variables and include parameters set from outside a world file: ``load_world(variables=..., include_params=...)``."""

from __future__ import annotations

import pytest

import mvsim_core as mv
from mvsim_core.xml.overrides import OverrideError, override_text

SENSOR = """<sensor class="laser" name="${name|laser1}">
  <nrays>${nrays|100}</nrays>
  <max_range>${range|20.0}</max_range>
</sensor>
"""

BOT = """<vehicle name="bot">
  <dynamics class="differential"/>
  <friction class="default"><mu>${mu}</mu></friction>
  <init_pose>$f{unifrnd(-1, 1)} 0 0</init_pose>
  <include file="defs/laser.sensor.xml" nrays="50"/>
</vehicle>
"""


def world(tmp_path, body: str):
    (tmp_path / "defs").mkdir(exist_ok=True)
    (tmp_path / "defs" / "laser.sensor.xml").write_text(SENSOR)
    path = tmp_path / "w.world.xml"
    path.write_text(f'<mvsim_world version="1.0">\n{body}</mvsim_world>\n')
    return path


def test_variable_override_wins_over_the_files_definition(tmp_path):
    p = world(tmp_path, '<variable name="mu" value="0.8"/>\n<gravity>$f{mu * 10}</gravity>\n' + BOT)
    assert mv.load_world(p).vehicles["bot"].friction.mu == 0.8
    w = mv.load_world(p, variables={"mu": 0.25})
    assert w.vehicles["bot"].friction.mu == 0.25
    assert w.params["gravity"] == 2.5  # $f{} sees it by bare name too


def test_override_keeps_the_random_draws_of_the_rest_of_the_world(tmp_path):
    """The overridden <variable> is still evaluated, so its rand() draw happens and later draws do not shift."""
    p = world(tmp_path, '<variable name="mu" value="$f{unifrnd(0.5, 0.9)}"/>\n' + BOT)
    plain = mv.load_world(p, seed=7)
    over = mv.load_world(p, seed=7, variables={"mu": 0.3})
    assert over.vehicles["bot"].friction.mu == 0.3
    assert 0.5 <= plain.vehicles["bot"].friction.mu <= 0.9
    assert over.vehicles["bot"].pose[0] == plain.vehicles["bot"].pose[0]


def test_variable_override_reaches_included_text(tmp_path):
    (tmp_path / "defs").mkdir()
    (tmp_path / "defs" / "v.vehicle.xml").write_text(BOT.replace('<include file="defs/', '<include file="'))
    (tmp_path / "defs" / "laser.sensor.xml").write_text(SENSOR)
    p = tmp_path / "w.world.xml"
    p.write_text('<mvsim_world version="1.0">\n<variable name="mu" value="0.8"/>\n'
                 '<include file="defs/v.vehicle.xml"/>\n</mvsim_world>\n')
    assert mv.load_world(p, variables={"mu": "0.125"}).vehicles["bot"].friction.mu == 0.125


def test_include_parameter_override(tmp_path):
    p = world(tmp_path, '<variable name="mu" value="0.8"/>\n' + BOT)
    assert mv.load_world(p).vehicles["bot"].sensors["laser1"].nrays == 50
    by_name = mv.load_world(p, include_params={"laser.sensor.xml": {"nrays": 30, "range": 4.5}})
    laser = by_name.vehicles["bot"].sensors["laser1"]
    assert (laser.nrays, laser.max_range) == (30, 4.5)  # replaces the attribute written, adds the missing one
    by_path = mv.load_world(p, include_params={"defs/laser.sensor.xml": {"nrays": 12}})
    assert by_path.vehicles["bot"].sensors["laser1"].nrays == 12
    by_glob = mv.load_world(p, include_params={"*.sensor.xml": {"nrays": 7}})
    assert by_glob.vehicles["bot"].sensors["laser1"].nrays == 7


@pytest.mark.parametrize(("variables", "include_params", "kind", "name", "says"), [
    ({"mux": 0.3}, None, "variable", "mux", "variable override 'mux' is not used by the world"),
    (None, {"lidar.sensor.xml": {"nrays": 3}}, "include", "nrays", "no <include> of a file matching"),
    (None, {"laser.sensor.xml": {"nray": 3}}, "include", "nray", "never read ${nray}"),
])
def test_unused_override_is_an_error(tmp_path, variables, include_params, kind, name, says):
    p = world(tmp_path, '<variable name="mu" value="0.8"/>\n' + BOT)
    with pytest.raises(OverrideError) as e:
        mv.load_world(p, variables=variables, include_params=include_params)
    assert (e.value.kind, e.value.name) == (kind, name)
    assert says in str(e.value)
    assert str(e.value).startswith(str(p))


def test_override_text():
    assert [override_text(v) for v in (True, False, 3, 0.1, 1e-5, "a b")] == ["true", "false", "3", "0.1", "1e-05",
                                                                              "a b"]
    with pytest.raises(TypeError):
        override_text([1])  # type: ignore[arg-type]
