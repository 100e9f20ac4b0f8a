"""World clock, automatic timestep, object access and the demo world."""

from __future__ import annotations

import math

import pytest

import mvsim_core as mv


def test_demo_world(repo_dir):
    w = mv.load_world(repo_dir / "worlds/demo.world.xml", seed=0)
    assert w.warnings == [] and w.missing_assets == {}
    assert list(w.vehicles) == ["bot1", "car1"]
    bot, car = w.vehicles["bot1"], w.vehicles["car1"]
    assert bot.dynamics.xml_class == "differential" and [x.name for x in bot.wheels] == ["l_wheel", "r_wheel"]
    assert bot.wheels[0].inertia == pytest.approx(0.5 * 1.5 * 0.1 ** 2)
    assert list(bot.sensors) == ["laser1"]
    laser = bot.sensors["laser1"]
    assert (laser.nrays, laser.fov, laser.period) == (541, pytest.approx(math.radians(270)), 0.1)
    assert laser.pose == pytest.approx((0.25, 0.0, 0.45, 0.0, 0.0, 0.0))
    assert laser.publish_topic == "/bot1/laser1"
    # Ackermann front axle is placed by f_wheels_x / f_wheels_d
    fl = next(x for x in car.wheels if x.name == "fl_wheel")
    assert (fl.x, fl.y) == (2.5, 0.75)
    assert car.dynamics.params["max_steer_ang_deg"] == pytest.approx(math.radians(35))
    assert car.pose == pytest.approx((13.0, -4.0, 0.0, math.pi, 0.0, 0.0))
    assert car.chassis.mass == 900.0 and car.chassis.color == (0x20, 0x60, 0xD0, 255)
    assert list(w.blocks) == ["pallet1", "pallet2", "pallet3", "crate"]
    assert [b.pose[0] for b in list(w.blocks.values())[:3]] == pytest.approx([-12.5, -10.9, -9.3])
    crate = w.blocks["crate"]
    assert crate.is_static and (crate.zmin, crate.zmax) == (0.0, 1.2)
    g = w.elements[0].grid
    assert (g.nx, g.ny, g.resolution) == (600, 400, pytest.approx(0.05))
    assert (g.x_min, g.y_min) == pytest.approx((-15.0, -10.0), abs=0.05)
    # odometry multipliers: y fixed at 1, x and yaw drawn from the seeded generator
    mx, my, myaw = bot.odometry_multipliers
    assert my == 1.0 and mx != 1.0 and abs(mx - 1) < 0.05 and abs(myaw - 1) < 0.1
    again = mv.load_world(repo_dir / "worlds/demo.world.xml", seed=0)
    assert again.vehicles["bot1"].odometry_multipliers == bot.odometry_multipliers


def _time_to_90_percent(world: mv.World, name: str, command: tuple[float, float], within: float) -> float | None:
    """Simulated seconds from a twist command (vx m/s, wz rad/s) until the vehicle's body twist first reaches 90 %
    of it (None if not within ``within`` s); the vehicle starts at rest."""
    veh = world.vehicles[name]
    vx, wz = command
    axis, goal = (0, vx) if vx else (2, wz)
    veh.set_twist(vx, 0.0, wz)
    t0 = world.time
    while world.time - t0 < within:
        world.step()
        if veh.twist[axis] >= 0.9 * goal:
            return world.time - t0
    return None


@pytest.mark.parametrize("command", [(0.5, 0.0), (0.0, 0.5)], ids=["0.5 m/s", "0.5 rad/s in place"])
def test_demo_robot_follows_nav2_commands_within_a_second(repo_dir, command):
    """Nav2's controllers and its spin / rotate-in-place behaviours assume the base tracks a velocity command within
    about a second: bot1 gets to 90 % of 0.5 m/s, or of 0.5 rad/s turning in place, in under 1 s (measured 0.20 s
    and 0.23 s), and a second later is within 3 % of it, with no sideways creep."""
    w = mv.load_world(repo_dir / "worlds/demo.world.xml", seed=0)
    w.run(0.2)  # settle
    t90 = _time_to_90_percent(w, "bot1", command, within=1.0)
    assert t90 is not None, f"bot1 did not reach 90 % of {command} within 1 s"
    w.run(1.0)
    vx, vy, wz = w.vehicles["bot1"].twist
    want_vx, want_wz = command
    assert vx == pytest.approx(want_vx, abs=0.015) and wz == pytest.approx(want_wz, abs=0.015) and abs(vy) < 0.01


def test_demo_world_objects_start_clear_of_each_other(repo_dir):
    """Nothing in the demo world is placed inside a wall or another object: after 2 s with no command, every vehicle
    and block is where the file puts it and no vehicle ever touched anything."""
    w = mv.load_world(repo_dir / "worlds/demo.world.xml", seed=0)
    placed = {n: o.pose for n, o in [*w.vehicles.items(), *w.blocks.items()]}
    touched = set()
    for _ in range(400):
        w.step()
        touched |= {n for n, v in w.vehicles.items() if v.collision}
    assert touched == set()
    for name, obj in [*w.vehicles.items(), *w.blocks.items()]:
        assert obj.pose[:2] == pytest.approx(placed[name][:2], abs=0.01), name
        assert obj.pose[3] == pytest.approx(placed[name][3], abs=0.01), name


def test_clock_and_auto_timestep(tmp_path):
    (tmp_path / "w.xml").write_text(
        '<mvsim_world version="1.0">\n<vehicle name="v"><dynamics class="differential"/><init_pose>0 0 0</init_pose>'
        '<sensor class="laser"><sensor_period>0.002</sensor_period></sensor></vehicle>\n</mvsim_world>')
    w = mv.load_world(tmp_path / "w.xml")
    assert w.timestep == pytest.approx(0.002)  # min(5 ms, shortest sensor period)
    w.run(0.1)
    assert w.time == pytest.approx(0.1) and w._steps == 50
    w.step()
    assert w.time == pytest.approx(0.102)
    with pytest.raises(ValueError):
        w.run(-1)


def test_set_pose(repo_dir):
    w = mv.load_world(repo_dir / "worlds/demo.world.xml")
    w.set_pose("crate", 1.0, 2.0, 0.5)
    assert w.blocks["crate"].pose[:4] == (1.0, 2.0, 0.0, 0.5)
    with pytest.raises(mv.MvsimError, match="no object named 'ghost'"):
        w.set_pose("ghost", 0, 0, 0)


def test_library_never_imports_opengl_or_glfw(repo_dir):
    """Loading and running a world (lidars, no cameras, no window) through the library API imports neither OpenGL
    nor glfw — nor does importing the viewer's GL-free modules (teleop, orbit camera, status, overlays)."""
    import subprocess
    import sys

    code = ("import sys, mvsim_core as mv\n"
            "import mvsim_core.gui.teleop, mvsim_core.gui.orbit_camera, mvsim_core.gui.status\n"
            "import mvsim_core.gui.overlay_geometry, mvsim_core.gui.window\n"
            f"w = mv.load_world({str(repo_dir / 'worlds/demo.world.xml')!r})\n"
            "w.vehicles['bot1'].set_twist(0.5, 0.0, 0.1)\n"
            "w.run(1.0)\n"
            "assert w.vehicles['bot1'].sensors['laser1'].last is not None\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('OpenGL', 'glfw')))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_set_pose_moves_an_actor_before_and_after_the_start(tmp_path):
    (tmp_path / "w.xml").write_text('<mvsim_world version="1.0">\n<actor name="bob"><init_pose>1 2 0</init_pose>'
                                    '</actor>\n</mvsim_world>\n')
    w = mv.load_world(tmp_path / "w.xml")
    w.set_pose("bob", 3.0, 4.0, 0.5)
    assert w.actors["bob"].pose == pytest.approx((3.0, 4.0, 0.0, 0.5, 0.0, 0.0))
    w.step()
    w.set_pose("bob", -1.0, 0.0, 1.0)
    assert w.actors["bob"].pose == pytest.approx((-1.0, 0.0, 0.0, 1.0, 0.0, 0.0))


def test_physics_exists_only_once_started(tmp_path):
    (tmp_path / "w.xml").write_text('<mvsim_world version="1.0">\n</mvsim_world>\n')
    w = mv.load_world(tmp_path / "w.xml")
    assert not w.started
    with pytest.raises(mv.MvsimError, match=r"call world.start\(\)"):
        _ = w.physics
    with pytest.raises(mv.MvsimError, match="not started"):
        _ = w.sensor_scheduler
    assert w.start() is w and w.started and w.physics is w.start().physics  # start() is idempotent


def test_step_order_listeners_see_sensors_and_clock_of_the_step(repo_dir):
    """Listeners run after the step's sensors, with the clock already advanced; removing one stops its calls."""
    w = mv.load_world(repo_dir / "worlds/demo.world.xml", seed=0)
    seen = []

    def listener(world):
        scan = world.vehicles["bot1"].sensors["laser1"].last
        seen.append((world.time, None if scan is None else scan.stamp))

    w.add_step_listener(listener)
    w.run(0.1)
    assert seen[-1][0] == pytest.approx(0.1) and seen[-1][1] == pytest.approx(0.1)  # the scan of this very step
    assert all(s is None for _, s in seen[:-1]) and len(seen) == round(0.1 / w.timestep)
    w.remove_step_listener(listener)
    w.remove_step_listener(listener)  # not registered: nothing happens
    w.run(0.1)
    assert len(seen) == round(0.1 / w.timestep)


def test_step_guard_holds_the_whole_step_and_can_come_and_go(tmp_path):
    """A step guard set (or taken away) while running is entered once around each step, listeners included; a
    step without one runs the same physics."""
    (tmp_path / "w.xml").write_text('<mvsim_world version="1.0"><vehicle name="r"><dynamics class="differential">'
                                    '<controller class="twist_pid"/></dynamics>'
                                    '<init_pose>0 0 0</init_pose></vehicle></mvsim_world>')
    worlds = [mv.load_world(tmp_path / "w.xml") for _ in range(2)]
    events: list[str] = []

    class Guard:
        def __enter__(self) -> None:
            events.append("enter")

        def __exit__(self, *exc: object) -> None:
            events.append("exit")

    worlds[0].add_step_listener(lambda world: events.append("listener"))
    for w in worlds:
        w.vehicles["r"].set_twist(0.5, 0.0, 0.2)
    for k in range(30):
        worlds[0].step_guard = Guard() if 10 <= k < 20 else None
        for w in worlds:
            w.step()
    assert events == ["listener"] * 10 + ["enter", "listener", "exit"] * 10 + ["listener"] * 10
    assert worlds[0].vehicles["r"].pose == worlds[1].vehicles["r"].pose and worlds[0].vehicles["r"].pose[0] > 0
    assert worlds[0].time == worlds[1].time == 30 * worlds[0].timestep


def test_sensor_poses_compose_vehicle_and_mount(tmp_path):
    (tmp_path / "w.xml").write_text("""<mvsim_world version="1.0">
  <vehicle name="r1">
    <dynamics class="differential"><controller class="twist_ideal"/></dynamics>
    <init_pose>2 1 90</init_pose>
    <sensor class="laser" name="l1"><pose_3d>0.5 0 0.3 0 0 0</pose_3d></sensor>
  </vehicle>
</mvsim_world>
""")
    w = mv.load_world(tmp_path / "w.xml")
    rot, pos = w.sensor_poses([w.vehicles["r1"].sensors["l1"]])
    assert w.started  # asking where sensors are starts the world
    assert pos[0] == pytest.approx([2.0, 1.5, 0.3], abs=1e-6)  # 0.5 m ahead of a robot facing +y (float32 yaw)
    assert rot[0] @ [1.0, 0.0, 0.0] == pytest.approx([0.0, 1.0, 0.0], abs=1e-6)
