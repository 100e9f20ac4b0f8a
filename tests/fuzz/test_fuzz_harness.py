"""The fuzzer's own machinery: the mutator is reproducible, the span scanner finds what it should, and the fork server
sorts real crashes, hangs, memory blow-ups and exceptions of a child into their classes."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from .child import _state_bucket, nonfinite_state, run_world
from .corpus import Corpus, build_mirror, included_files
from .forkserver import ForkServer, Job, Limits
from .mutator import make_mutant
from .outcome import CRASH, HANG, MEMORY, OK, UNCAUGHT, WORLD_FILE_ERROR, Result, dump_bucket, message_bucket
from .xml_spans import scan


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus.discover()


def test_mutant_k_of_seed_s_is_always_the_same(corpus: Corpus) -> None:
    a = [make_mutant(corpus, 7, k) for k in range(40)]
    b = [make_mutant(corpus, 7, k) for k in range(40)]
    assert [(m.source.id, m.files, m.ops) for m in a] == [(m.source.id, m.files, m.ops) for m in b]
    # and mutants differ from each other and from their source
    assert len({tuple(sorted(m.files.items())) for m in a}) == 40
    assert sum(m.files[m.world_rel] != m.source.root.text[m.world_rel] for m in a) >= 30
    other_seed = [make_mutant(corpus, 8, k) for k in range(40)]
    assert [m.files for m in other_seed] != [m.files for m in a]


def test_mutants_cover_every_operator_and_the_included_files(corpus: Corpus) -> None:
    ops: set[str] = set()
    included = 0
    for k in range(600):
        m = make_mutant(corpus, 0, k)
        ops.update(op.split(":", 1)[0] for op in m.ops)
        included += any(rel != m.world_rel for rel in m.files)
    assert ops == {"flip_bytes", "truncate", "insert_bytes", "delete_element", "duplicate_element", "swap_elements",
                   "move_element", "insert_fragment", "replace_numbers", "mutate_attr", "mutate_text", "drop_attr",
                   "deep_if", "nested_for", "variable_chain", "huge_value", "self_include", "bad_include",
                   "duplicate_many", "move_to_parent", "swap_values", "delete_required", "odd_numeral", "odd_name",
                   "device_include", "include_cycle", "dtd", "garbage_image", "garbage_model"}
    assert included >= 60  # about a quarter of the mutations go to an included file


def test_scan_finds_elements_values_and_numbers() -> None:
    text = ('<!-- 12 --><w v="1.0"><a x="2" c="$f{if(i<=3, 1, 0)}">3 4.5e-1</a><b/>'
            '<c><d>-7</d></c><e>x</e_wrong></w>')
    s = scan(text)
    assert [(e.tag, e.depth) for e in s.elements] == [("w", 0), ("a", 1), ("b", 1), ("c", 1), ("d", 2)]
    assert [text[n.start:n.end] for n in s.numbers] == ["1.0", "2", "3", "1", "0", "3", "4.5e-1", "-7"]
    assert [(v.what, text[v.start:v.end]) for v in s.attr_values] == [
        ("attr:v", "1.0"), ("attr:x", "2"), ("attr:c", "$f{if(i<=3, 1, 0)}")]
    assert [(t.what, text[t.start:t.end]) for t in s.texts] == [("text:a", "3 4.5e-1"), ("text:d", "-7")]
    assert s.elements[4].parent == 3 and s.elements[2].self_closing


def test_included_files_are_found_transitively(corpus: Corpus) -> None:
    demo = corpus.world("worlds/demo.world.xml")
    assert included_files(demo.root, demo.rel) == ("definitions/warehouse_bot.vehicle.xml",
                                                   "definitions/compact_car.vehicle.xml",
                                                   "definitions/lidar2d.sensor.xml")


def test_mirror_links_the_originals_and_writes_the_changes(corpus: Corpus, tmp_path: Path) -> None:
    demo = corpus.world("worlds/demo.world.xml")
    build_mirror(demo.root, tmp_path, {demo.rel: b"<mvsim_world/>", "new/blob.xml": b"x"})
    assert (tmp_path / demo.rel).read_bytes() == b"<mvsim_world/>" and not (tmp_path / demo.rel).is_symlink()
    assert (tmp_path / "new/blob.xml").read_bytes() == b"x"
    png = tmp_path / "maps/warehouse.png"
    assert png.is_symlink() and png.resolve() == (demo.root.path / "maps/warehouse.png").resolve()


# ---------------------------------------------------------------------- the fork server's classes
def _ok(path: str, **kw: object) -> Result:
    return Result(OK, message=path)


def _segfault(path: str, **kw: object) -> Result:
    os.kill(os.getpid(), signal.SIGSEGV)
    return Result(OK)


def _sleep(path: str, **kw: object) -> Result:
    time.sleep(60)
    return Result(OK)


def _allocate(path: str, **kw: object) -> Result:
    blocks = [bytearray(256 * 1024 * 1024) for _ in range(16)]  # 4 GiB: over the 512 MiB limit
    return Result(OK, message=str(len(blocks)))


def _raise(path: str, **kw: object) -> Result:
    raise SystemExit(5)


def _run(target: object, tmp_path: Path, timeout: float = 20.0) -> dict[str, Result]:
    names = ["a", "b", "c"]
    jobs = [Job(n, f"/{n}.world.xml", tmp_path / n) for n in names]
    server = ForkServer(Limits(timeout, 512), jobs=2, target=target)  # type: ignore[arg-type]
    return {job.key: res for job, res in server.run(jobs)}


def test_fork_server_returns_each_childs_result(tmp_path: Path) -> None:
    got = _run(_ok, tmp_path)
    assert {k: (r.outcome, r.message) for k, r in got.items()} == {
        "a": (OK, "/a.world.xml"), "b": (OK, "/b.world.xml"), "c": (OK, "/c.world.xml")}
    assert all(0 < r.max_rss_mb < 512 for r in got.values())


def test_fork_server_sorts_crashes_hangs_memory_and_escapes(tmp_path: Path) -> None:
    crash = _run(_segfault, tmp_path / "1")["a"]
    assert (crash.outcome, crash.bucket) == (CRASH, "SIGSEGV @ fuzz/test_fuzz_harness.py:_segfault")
    assert crash.detail.startswith("Fatal Python error: Segmentation fault")  # faulthandler's dump, from the log
    t0 = time.monotonic()
    hang = _run(_sleep, tmp_path / "2", timeout=1.5)
    assert {r.outcome for r in hang.values()} == {HANG}
    assert hang["a"].bucket == "hang @ fuzz/test_fuzz_harness.py:_sleep"  # from the stack dumped before the kill
    assert time.monotonic() - t0 < 6.0  # 3 children, 2 at a time, 1.5 s each
    mem = _run(_allocate, tmp_path / "3")["a"]
    assert mem.outcome == MEMORY
    escaped = _run(_raise, tmp_path / "4")["a"]
    assert (escaped.outcome, escaped.bucket) == (UNCAUGHT, "child exited with status 3 without a result")


# ---------------------------------------------------------------------- classification helpers
def test_buckets_name_the_innermost_simulator_frame() -> None:
    dump = ('Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n'
            '  File "/x/mvsim_core/sensors/raycast/segments.py", line 80 in cast\n'
            '  File "/x/mvsim_core/world.py", line 250 in step\n  File "/x/tests/fuzz/child.py", line 9 in run_world\n')
    assert dump_bucket(dump) == "mvsim_core/sensors/raycast/segments.py:cast"
    assert message_bucket("/tmp/a b/x.world.xml:12: bad number 'nan' for <x> (not finite); expected 1.5") == \
        "bad number … for <x> (not finite); expected #"
    assert _state_bucket("vehicle 'bot1'.pose[3] = nan") == "vehicle.pose"
    assert _state_bucket("sensor 'b/l' (Lidar2D).last.ranges (array (3,)) holds nan") == "sensor Lidar2D.last.ranges"
    assert _state_bucket("world.time = inf") == "world.time"


def test_run_world_on_a_good_and_a_bad_world(repo_dir: Path, tmp_path: Path) -> None:
    good = run_world(str(repo_dir / "worlds/demo.world.xml"), max_steps=5)
    assert (good.outcome, good.steps, good.dt, good.extra) == (OK, 5, 0.005, {})
    slow = run_world(str(repo_dir / "worlds/demo.world.xml"), wall_budget=0.0)  # stops after its first step
    assert (slow.outcome, slow.steps, slow.extra["truncated"].split(" in ")[0]) == (OK, 1, "1 of 100 steps")
    bad = tmp_path / "bad.world.xml"
    bad.write_text('<mvsim_world version="1.0">\n<gravity>nine</gravity>\n</mvsim_world>\n')
    res = run_world(str(bad))
    assert (res.outcome, res.stage) == (WORLD_FILE_ERROR, "load")
    assert res.message.startswith(f"{bad}:2: bad number 'nine' for <gravity>")


def test_nonfinite_state_finds_nan_poses_and_observations(repo_dir: Path) -> None:
    import numpy as np

    from mvsim_core.loader import load_world
    from mvsim_core.sensors.lidar2d import LaserScan

    world = load_world(repo_dir / "worlds/demo.world.xml")  # not started: poses are the declared ones
    assert nonfinite_state(world) is None
    laser = world.vehicles["bot1"].sensors["laser1"]
    laser.last = LaserScan(0.1, np.array([1.0, np.inf], np.float32), np.ones(2, bool), np.zeros(2, np.float32),
                           (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), 10.0, "laser1")
    assert nonfinite_state(world) == "sensor 'bot1/laser1' (Lidar2D).last.ranges (array (2,)) holds inf"
    laser.last = None
    world.vehicles["car1"].sim.pose = (float("nan"), 0.0, 0.0, 0.0, 0.0, 0.0)
    assert nonfinite_state(world) == "vehicle 'car1'.pose[0] = nan"


def test_run_world_counts_physics_faults_apart(tmp_path: Path) -> None:
    """A world that loads and then blows up an object is ``ok`` (the object is reset, the state stays finite), with
    its faults noted for the summary: front wheels of 2e-303 kg·m² with no axle damping under the raw controller's
    -1e6 N·m overflow."""
    wreck = tmp_path / "wreck.world.xml"
    wreck.write_text(
        '<mvsim_world version="1.0">\n<simul_timestep>0.005</simul_timestep>\n<vehicle name="wreck">\n'
        '<dynamics class="ackermann"><rl_wheel/><rr_wheel/><fl_wheel inertia="2e-303"/><fr_wheel inertia="2e-303"/>\n'
        '<controller class="raw"><fl_torque>-1e6</fl_torque><fr_torque>-1e6</fr_torque></controller></dynamics>\n'
        '<friction class="default"><C_damping>0</C_damping></friction>\n'
        '<init_pose>0 0 0</init_pose>\n</vehicle>\n</mvsim_world>\n')
    res = run_world(str(wreck), sim_time=0.5)
    assert (res.outcome, res.steps) == (OK, 100)
    assert (res.extra["faults"], res.extra["fault_bucket"]) == (1, "vehicle: wheel # spin became NaN/inf")
    assert res.extra["fault"].startswith("vehicle 'wreck' blew up at t=0.3600 s (step 72): wheel 3 spin")
