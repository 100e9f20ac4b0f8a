"""The sweep spec: defaults, run expansion and ids, the spec hash, and every mistake at its line."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from mvsim_core.sweep.expand import expand, run_id
from mvsim_core.sweep.spec import DEFAULT_CONTROL_PERIOD, DEFAULT_TIMEOUT, SpecError, load_spec
from mvsim_core.sweep.validate import check_against_world

REPO = Path(__file__).resolve().parents[3]
WORLD = REPO / "worlds" / "sweeps" / "friction.world.xml"


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text.replace("WORLD", str(WORLD)))
    return p


def test_smallest_spec_is_three_keys(tmp_path):
    spec = load_spec(write(tmp_path, "world: WORLD\nduration: 2\nseeds: [0, 1, 2]\n"))
    assert spec.world == WORLD and spec.duration == 2.0 and spec.seeds == (0, 1, 2)
    assert spec.parameters == () and spec.controller.type == "none" and spec.goal is None
    assert [m.name for m in spec.metrics] == ["collisions"]
    assert (spec.control_period, spec.timeout, spec.record, spec.vehicle) == (DEFAULT_CONTROL_PERIOD,
                                                                              DEFAULT_TIMEOUT, False, None)
    assert spec.run_count == 3
    assert [r.seed for r in expand(spec)] == [0, 1, 2]
    check_against_world(spec)


def test_world_relative_to_the_spec(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "w.world.xml").write_text(WORLD.read_text().replace("../definitions/",
                                                                            str(WORLD.parent.parent / "definitions") +
                                                                            "/"))
    spec = load_spec(write(tmp_path, "world: sub/w.world.xml\nduration: 1\nseeds: [3]\n"))
    assert spec.world == (tmp_path / "sub" / "w.world.xml").resolve()


def test_expansion_is_the_cartesian_product_times_seeds(tmp_path):
    spec = load_spec(write(tmp_path, """world: WORLD
duration: 2
seeds: {range: [0, 3]}
variables:
  mu: [0.1, 0.8]
include_params:
  lidar2d.sensor.xml:
    noise: {linspace: [0.0, 0.03, 4]}
"""))
    runs = list(expand(spec))
    assert spec.run_count == len(runs) == 2 * 4 * 3
    assert [p.column for p in spec.parameters] == ["var.mu", "include[lidar2d.sensor.xml].noise"]
    assert spec.parameters[1].values == (0.0, 0.01, 0.02, 0.03)
    assert runs[0].columns(spec) == {"var.mu": 0.1, "include[lidar2d.sensor.xml].noise": 0.0}
    assert [r.seed for r in runs[:4]] == [0, 1, 2, 0]  # seeds fastest
    assert runs[-1].variables(spec) == {"mu": 0.8}
    assert runs[-1].include_params(spec) == {"lidar2d.sensor.xml": {"noise": 0.03}}
    assert len({r.run_id for r in runs}) == len(runs)
    assert [r.index for r in runs] == list(range(len(runs)))


def test_run_ids_are_stable(tmp_path):
    """A run's id depends on its seed and parameter values only: not on the order of keys, the duration, other
    runs."""
    a = load_spec(write(tmp_path, "world: WORLD\nduration: 2\nseeds: [0, 1]\nvariables: {mu: [0.1, 0.8]}\n", "a.yaml"))
    b = load_spec(write(tmp_path, "variables: {mu: [0.8]}\nseeds: [1]\nduration: 5\nworld: WORLD\n", "b.yaml"))
    ids_a = {(r.seed, r.settings): r.run_id for r in expand(a)}
    (rb,) = expand(b)
    assert ids_a[(1, (0.8,))] == rb.run_id == run_id(1, {"var.mu": 0.8})
    assert run_id(1, {"var.mu": 0.8}) != run_id(1, {"var.mu": "0.8"}) != run_id(2, {"var.mu": 0.8})
    assert rb.run_id == "cd85c360b4362d24"  # the same in every version: results files outlive releases


def test_spec_hash_covers_what_decides_results(tmp_path):
    base = "world: WORLD\nduration: 2\nseeds: [0, 1]\n"
    h = load_spec(write(tmp_path, base)).spec_hash
    assert len(h) == 16
    assert load_spec(write(tmp_path, base + "timeout: 5\nrecord: true\n")).spec_hash == h
    assert load_spec(write(tmp_path, base.replace("2", "3", 1))).spec_hash != h
    assert load_spec(write(tmp_path, base + "goal: {x: 1, y: 0}\n")).spec_hash != h


def test_full_spec(tmp_path):
    spec = load_spec(write(tmp_path, """world: WORLD
duration: 4
seeds: [5]
vehicle: bot1
controller:
  type: twists
  twists:
    - {until: 1.0, vx: 0.5}
    - {until: 3.0, vx: 0.2, wz: 0.3}
goal: {x: 1, y: 2, yaw_deg: 90, tolerance: 0.2, yaw_tolerance_deg: 5}
metrics: [final_pose_error, {name: energy, function: "my_mod:energy"}, other_mod:score]
control_period: 0.1
timeout: 30
record: true
"""))
    assert spec.controller.type == "twists" and spec.controller.twists[1].wz == 0.3
    assert spec.controller.twists[0].wz == 0.0 and spec.controller.twists[0].vy == 0.0
    assert spec.goal is not None and math.isclose(spec.goal.yaw or 0, math.pi / 2)
    assert math.isclose(spec.goal.yaw_tolerance, math.radians(5)) and spec.goal.tolerance == 0.2
    assert [(m.name, m.function) for m in spec.metrics] == [("final_pose_error", ""), ("energy", "my_mod:energy"),
                                                            ("score", "other_mod:score")]
    assert (spec.control_period, spec.timeout, spec.record, spec.vehicle) == (0.1, 30.0, True, "bot1")


BAD = [
    # (spec text, line, message fragment)
    ("world: WORLD\nduration: 2\n", 1, "the sweep spec needs the key 'seeds'"),
    ("world: WORLD\nduration: 2\nseeds: [0]\nseed: 3\n", 4, "unknown key 'seed' in the sweep spec; did you mean "
                                                            "'seeds'?"),
    ("world: WORLD\nduration: two\nseeds: [0]\n", 2, "duration must be a number of simulated seconds, not 'two'"),
    ("world: WORLD\nduration: -1\nseeds: [0]\n", 2, "duration must be > 0 simulated seconds (got -1)"),
    ("world: nowhere.world.xml\nduration: 1\nseeds: [0]\n", 1, "world file not found:"),
    ("world: WORLD\nduration: 1\nseeds: [0, 1, 0]\n", 3, "seed 0 is listed twice (first at line 3)"),
    ("world: WORLD\nduration: 1\nseeds:\n  - 0\n  - -4\n", 5, "a seed must be >= 0 (got -4)"),
    ("world: WORLD\nduration: 1\nseeds: {range: [5, 5]}\n", 3, "seeds: range [5, 5] is empty"),
    ("world: WORLD\nduration: 1\nseeds: [0]\nvariables:\n  mu: []\n", 5, "variable 'mu' has no value"),
    ("world: WORLD\nduration: 1\nseeds: [0]\nvariables:\n  mu: {linspace: [0, 1]}\n", 5,
     "linspace is [start, stop, count]"),
    ("world: WORLD\nduration: 1\nseeds: [0]\ncontroller: {type: teleport}\n", 4, "unknown controller type "
                                                                                 "'teleport'; one of: none, twists"),
    ("world: WORLD\nduration: 1\nseeds: [0]\ncontroller:\n  type: goto\n", 4, "controller type goto drives to the "
                                                                              "goal: add `goal: {x: X, y: Y}`"),
    ("world: WORLD\nduration: 1\nseeds: [0]\ncontroller:\n  type: goto\n  sped: 2\ngoal: {x: 1, y: 0}\n", 6,
     "unknown key 'sped' in controller (type goto); did you mean 'speed'?"),
    ("world: WORLD\nduration: 1\nseeds: [0]\ncontroller:\n  type: twists\n  twists:\n    - {until: 2, vx: 1}\n"
     "    - {until: 1, vx: 0}\n", 8, "twist until 1 s must come after the previous one (2 s)"),
    ("world: WORLD\nduration: 1\nseeds: [0]\ncontroller:\n  type: policy\n  function: not a callable\n", 6,
     "must name a function as module:function"),
    ("world: WORLD\nduration: 1\nseeds: [0]\nmetrics: [time_to_goal]\n", 4, "metric time_to_goal is measured "
                                                                            "against the goal"),
    ("world: WORLD\nduration: 1\nseeds: [0]\nmetrics:\n  - collisions\n  - colisions\n", 6,
     "unknown metric 'colisions'; did you mean 'collisions'?"),
    ("world: WORLD\nduration: 1\nseeds: [0]\nmetrics: [{name: seed, function: 'm:f'}]\n", 4,
     "custom metric name 'seed' is taken by a results column"),
    ("world: WORLD\nduration: 1\nseeds: [0]\nrecord: yes please\n", 4, "record must be true or false"),
    ("world: WORLD\nduration: 1\nduration: 2\nseeds: [0]\n", 3, "'duration' is given twice (first at line 2)"),
    ("world: WORLD\nduration: [1\nseeds: [0]\n", 3, "not valid YAML"),
    ("- world\n- duration\n", 1, "the sweep spec must be a mapping"),
    ("", 1, "empty spec; the smallest spec is"),
]


@pytest.mark.parametrize(("text", "line", "says"), BAD, ids=[f"{i}" for i in range(len(BAD))])
def test_bad_spec_says_where_and_what(tmp_path, text, line, says):
    p = write(tmp_path, text)
    with pytest.raises(SpecError) as e:
        load_spec(p)
    assert (e.value.file, e.value.line) == (str(p), line), str(e.value)
    assert says in e.value.message, str(e.value)
    assert str(e.value).startswith(f"{p}:{line}: ")


CHECKED = [
    # (spec text, custom module text, line, message fragment): found when the spec meets its world
    ("variables:\n  muu: [0.1]\n", "", 5, "variable override 'muu' is not used by the world"),
    ("include_params:\n  lidar2d.sensor.xml:\n    noize: [0.1]\n", "", 6, "include parameter 'noize'"),
    ("vehicle: bot2\n", "", 4, "no vehicle 'bot2' in friction.world.xml; it has bot1"),
    ("control_period: 0.001\n", "", 4, "control_period 0.001 s is shorter than the world's physics step (0.005 s)"),
    ("metrics: [custom_mod:nothing]\n", "def energy(world, ctx):\n    return 1.0\n", 4,
     "custom_mod:nothing: custom_mod has no 'nothing'"),
    ("metrics: [missing_mod:energy]\n", "", 4, "missing_mod:energy: no module 'missing_mod' beside the spec"),
    ("metrics: [custom_mod:VALUE]\n", "VALUE = 3\n", 4, "'VALUE' is a int, not a function"),
    ("controller:\n  type: policy\n  function: custom_mod:act\n", "raise RuntimeError('no GPU')\n", 6,
     "importing custom_mod failed: RuntimeError: no GPU"),
]


@pytest.mark.parametrize(("extra", "module", "line", "says"), CHECKED, ids=[f"{i}" for i in range(len(CHECKED))])
def test_spec_checked_against_its_world(tmp_path, request, extra, module, line, says):
    name = f"custom_mod_{request.node.callspec.id}"  # a module imports once per process: one name per case
    if module:
        (tmp_path / f"{name}.py").write_text(module)
    p = write(tmp_path, "world: WORLD\nduration: 1\nseeds: [0]\n" + extra.replace("custom_mod", name))
    says = says.replace("custom_mod", name)
    spec = load_spec(p)
    with pytest.raises(SpecError) as e:
        check_against_world(spec)
    assert (e.value.file, e.value.line) == (str(p), line), str(e.value)
    assert says in e.value.message, str(e.value)
