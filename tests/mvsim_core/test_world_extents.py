"""Every part of the simulator puts every object in the same place, in every shipped and upstream world.

For each object and solid element of each world, five boxes (world frame, m) must agree to 1 cm in x, y and z:

* what ``mvsim check --extents`` prints (the real command, on the world before it starts);
* what the physics uses once started: the Box2D fixtures (x, y) and the physics' heights (the block's pose z, the
  vehicle's fitted z; planes, elevation maps and grids as the terrain and grid obstacles hold them);
* what the 2D ray caster of 2D lidars sees, with and without ``raytrace_3d``;
* what the 3D ray caster of 3D lidars sees;
* what the cameras' renderer draws (orthographic depth images).

Each caster's box is measured by casting images of parallel rays at the object alone (``extent_probes``). Where a
visual model stands for an object (a block, a vehicle chassis or a wheel whose ``<visual>`` loads), the 3D sensors see
the model while the physics keeps the declared prism: those sensors are then held to the model's own box at the
physics pose (and the plain 2D lidar, which sees the outline, to the physics). This is the test that would have caught
``<walls>`` seen 0.5 m too high by the 3D sensors in upstream's turtlebot world (issue 38).
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.geometry.extent import Extent, posed, prism_corners, wheel_corners

sys.path.insert(0, str(Path(__file__).resolve().parent))
import extent_probes as ep  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TOL = 0.01
"""m: how far two boxes' bounds may differ."""

SHIPPED = sorted((REPO / "worlds").glob("*.world.xml")) + sorted((REPO / "mvsim_core/gym/worlds").glob("*.world.xml"))
UPSTREAM = ("mvsim_tutorial/demo_1robot", "mvsim_tutorial/demo_2robots", "mvsim_tutorial/demo_articulated_vehicle",
            "mvsim_tutorial/demo_camera", "mvsim_tutorial/demo_depth_camera", "mvsim_tutorial/demo_elevation_map",
            "mvsim_tutorial/demo_friction_zones", "mvsim_tutorial/demo_jackal", "mvsim_tutorial/demo_many_robots",
            "mvsim_tutorial/demo_turtlebot_world", "mvsim_tutorial/demo_walls", "mvsim_tutorial/mvsim_slam",
            "tests/test-still-lidar2d")
BOUNDS = ("x_min", "x_max", "y_min", "y_max", "z_min", "z_max")
_LINE = re.compile(r"^  (\S+): x (\S+)\.\.(\S+), y (\S+)\.\.(\S+), z (\S+)\.\.(\S+) m$")


def check_extents(path: Path) -> dict[str, Extent]:
    """The boxes ``mvsim check --extents`` prints."""
    out = subprocess.run([sys.executable, "-m", "mvsim_core.cli", "check", str(path), "--extents"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    body = out.split("\nextents: ", 1)[1].splitlines()[1:]
    boxes = {}
    for line in body:
        m = _LINE.match(line)
        assert m, f"unexpected extents line {line!r}"
        boxes[m[1]] = Extent(*(float(v) for v in m.groups()[1:]))
    return boxes


# ------------------------------------------------------------------------------------------------ the physics
def physics_extents(world: mv.World) -> dict[str, tuple[Extent, float]]:
    """The box of every object and element as the started physics holds it, with the extra tolerance (m) its tilt
    allows (a tilted prism spreads by its height times the sine of the tilt; Box2D keeps the untilted outline)."""
    from mvsim_core.elements.elevation_map import ElevationMap
    from mvsim_core.elements.horizontal_plane import HorizontalPlane
    from mvsim_core.elements.occupancy_grid import CELL_HEIGHT, OccupancyGrid
    from mvsim_core.elements.vertical_plane import VerticalPlane

    ph = world.physics
    bodies = ph.bodies
    out: dict[str, tuple[Extent, float]] = {}
    for n, b in world.blocks.items():
        _, _, z, yaw, pitch, roll = b.pose
        if n in bodies.block_bodies:
            xy = ep.xy_box(ep.body_xy(bodies.block_bodies[n]))
        else:  # intangible: no body; the footprint where the physics put it
            xy = ep.xy_box(posed(np.column_stack([b.footprint, np.zeros(len(b.footprint))]), b.pose)[:, :2])
        tilt = (abs(b.zmax) + abs(b.zmin)) * (abs(math.sin(pitch)) + abs(math.sin(roll)))
        out[n] = (Extent(*xy, z + b.zmin, z + b.zmax), tilt)
    for k, (n, v) in enumerate(zip(ph.names, ph.vehicles, strict=True)):
        xy = ep.xy_box(ep.body_xy(bodies.vehicle_bodies[n]))
        top = max([v.chassis.zmax, *(w.diameter for w in v.wheels)])
        bottom = min([v.chassis.zmin, 0.0])
        z = float(ph.z[k])
        tilt = (top - bottom) * (abs(math.sin(ph.pitch[k])) + abs(math.sin(ph.roll[k])))
        out[n] = (Extent(*xy, z + bottom, z + top), tilt)
    for n, a in world.actors.items():
        ext = a.extent()
        xy = ep.xy_box(ep.body_xy(bodies.actor_bodies[n])) if n in bodies.actor_bodies else \
            (ext.x_min, ext.x_max, ext.y_min, ext.y_max)
        out[n] = (Extent(*xy, ext.z_min, ext.z_max), 0.0)
    seen: dict[str, int] = {}
    planes = iter(bodies.plane_bodies)
    grids = iter(bodies.grids)
    for e in world.elements:
        cls = e.xml_class
        seen[cls] = seen.get(cls, 0) + 1
        name = f"{cls}#{seen[cls]}"
        if isinstance(e, HorizontalPlane):
            row = [p for p in ph.terrain._plane_objs].index(e)
            x0, x1, y0, y1, zp = ph.terrain._planes[row]
            out[name] = (Extent(x0, x1, y0, y1, zp, zp), 0.0)
        elif isinstance(e, VerticalPlane):
            pts = np.concatenate([ep.body_xy(next(planes)) for _ in e.collision_pieces()])
            out[name] = (Extent(*ep.xy_box(pts), float(e.params.z), float(e.params.z + e.params.height)), 0.0)
        elif isinstance(e, ElevationMap):
            heights = next(h for h, x0, y0, inv in ph.terrain._grids if x0 == e.corner_min_x and y0 == e.corner_min_y)
            out[name] = (e.extent(), 0.0)
            assert float(heights.min()) == e.extent().z_min and float(heights.max()) == e.extent().z_max
        elif isinstance(e, OccupancyGrid):
            go = next(grids)
            occ = go.occupied.reshape(go.ny, go.nx)
            iy, ix = np.nonzero(occ)
            if len(ix):
                g, r = e.grid, e.grid.resolution
                out[name] = (Extent(g.x_min + r * ix.min(), g.x_min + r * (ix.max() + 1), g.y_min + r * iy.min(),
                                    g.y_min + r * (iy.max() + 1), 0.0, CELL_HEIGHT), 0.0)
    return out


# ------------------------------------------------------------------------------------------------ visual models
def _meshes(visuals: list[Any]) -> list[np.ndarray]:
    from mvsim_core.sensors.raycast.rays3d import _loaded_meshes

    return [np.asarray(m.vertices, dtype=np.float64) for _, m in _loaded_meshes(visuals)]


def seen_extent(world: mv.World, name: str, check: Extent) -> tuple[Extent, np.ndarray | None]:
    """The box the 3D sensors should see of object ``name``: its visual models' box at the physics pose where
    models stand for it, else ``check``'s; and the models' points (m, world) where they do (None otherwise)."""
    if name in world.blocks:
        b = world.blocks[name]
        parts = _meshes(b.visuals)
        if not parts:
            return check, None
        pts = posed(np.concatenate(parts), b.pose)
        return Extent.of_points(pts), pts
    if name in world.vehicles:
        v = world.vehicles[name]
        chassis = _meshes(v.visuals)
        wheels_seen = []
        for w in v.wheels:
            wm = _meshes(w.visuals)
            if wm:  # the wheel frame: its centre, turned by its yaw
                c, s = math.cos(w.yaw), math.sin(w.yaw)
                pts = np.concatenate(wm)
                wheels_seen.append(np.column_stack([w.x + c * pts[:, 0] - s * pts[:, 1],
                                                    w.y + s * pts[:, 0] + c * pts[:, 1],
                                                    0.5 * w.diameter + pts[:, 2]]))
            else:
                wheels_seen.append(wheel_corners(w.x, w.y, w.yaw, w.diameter, w.width))
        if not chassis and not any(_meshes(w.visuals) for w in v.wheels):
            return check, None
        ch = v.chassis
        body = chassis or [prism_corners(ch.footprint, ch.zmin, ch.zmax)]
        pts = posed(np.concatenate(body + wheels_seen), v.pose)
        return Extent.of_points(pts), pts
    return check, None


def hints_of(points: np.ndarray | None) -> dict[str, np.ndarray] | None:
    """Per bound, the model point that makes it (where the probes look closely)."""
    if points is None:
        return None
    return {f"{'xyz'[a]}_{m}": points[int(f(points[:, a]))] for a in range(3)
            for m, f in (("min", np.argmin), ("max", np.argmax))}


# ------------------------------------------------------------------------------------------------ the test
def _proxy(world: mv.World, name: str) -> tuple[Any, Any]:
    """(proxy world holding only ``name``, the element when it is one)."""
    if name in world.blocks:
        return ep.proxy_world(world, blocks=(name,)), None
    if name in world.vehicles:
        return ep.proxy_world(world, vehicles=(name,)), None
    if name in world.actors:
        return ep.proxy_world(world, actors=(name,)), None
    cls, k = name.split("#")
    el = [e for e in world.elements if e.xml_class == cls][int(k) - 1]
    return ep.proxy_world(world, elements=(el,)), el


def _differences(measured: dict[str, float | None], expected: Extent) -> dict[str, float | None]:
    return {k: None if v is None else v - getattr(expected, k) for k, v in measured.items()}


EVERY_RUN = ("worlds/demo.world.xml", "shared:mvsim_tutorial/demo_turtlebot_world")
"""Worlds swept by every ``make test``; the others (a few minutes in all) by the ``heavy`` step of CI."""


def _param(where: str, name: str) -> Any:
    return pytest.param(where, id=name, marks=() if where in EVERY_RUN else pytest.mark.heavy)


WORLDS = [_param(str(p.relative_to(REPO)), p.name) for p in SHIPPED] + \
    [_param(f"shared:{rel}", rel.split("/")[-1]) for rel in UPSTREAM]


@pytest.mark.slow
@pytest.mark.parametrize("where", WORLDS)
def test_every_part_places_each_object_the_same(where: str, request: pytest.FixtureRequest,
                                                 offscreen_gl: str) -> None:
    from mvsim_core.elements.elevation_map import ElevationMap
    from mvsim_core.elements.horizontal_plane import HorizontalPlane
    from mvsim_core.elements.occupancy_grid import OccupancyGrid

    if where.startswith("shared:"):
        path = request.getfixturevalue("worlds_dir") / f"{where[7:]}.world.xml"
    else:
        path = REPO / where
    check = check_extents(path)
    world = mv.load_world(path, seed=0)
    world.start()
    assert set(check) == set(world.extents()), "mvsim check lists every object and solid element"
    physics = physics_extents(world)
    problems: list[str] = []

    def compare(what: str, name: str, measured: dict[str, float | None], expected: Extent, tol: float) -> None:
        for k, d in _differences(measured, expected).items():
            if d is None:
                problems.append(f"{name}: {what} sees nothing where {k} = {getattr(expected, k):.4f}")
            elif abs(d) > tol:
                problems.append(f"{name}: {what} {k} off by {d:+.4f} m")

    for name, box in check.items():
        phys, tilt = physics[name]
        tol = TOL + tilt
        proxy, el = _proxy(world, name)
        is_grid = isinstance(el, OccupancyGrid)
        compare("physics", name, {k: getattr(phys, k) for k in BOUNDS}, box, tol)
        block = world.blocks.get(name)
        if block is not None and block.is_visual_only:  # only the viewer draws it
            for what, probe in (("3D lidar", ep.probe_3d(proxy)), ("camera", ep.probe_render(proxy))):
                assert not np.isfinite(probe(ep.side_view(box, 0, 1, 0.05))).any(), f"{name}: {what} sees it"
            continue
        flat = isinstance(el, (HorizontalPlane, ElevationMap))
        feature = 0.5 * el.grid.resolution if is_grid else ep.FEATURE
        from_below = isinstance(el, HorizontalPlane) and str(el.params["cull_face"]).upper() == "FRONT"
        seen, model = seen_extent(world, name, box)
        kw = dict(horizontal=not flat, feature=feature, from_below=from_below, hints=hints_of(model))
        compare("3D lidar", name, ep.measure(ep.probe_3d(proxy), seen, **kw), seen, tol)
        compare("camera", name, ep.measure(ep.probe_render(proxy), seen, **kw), seen, tol)
        if flat:
            continue  # horizontal rays never meet the ground
        intangible = block is not None and block.is_intangible
        lidar_3d = ep.measure(ep.probe_2d(proxy, raytrace_3d=True), seen, feature=feature, hints=hints_of(model))
        lidar_2d = ep.measure(ep.probe_2d(proxy, raytrace_3d=False), box, heights=False, feature=feature)
        if intangible:  # no body: 2D lidars do not see it (as upstream's Box2D ray cast)
            assert all(v is None for v in (*lidar_3d.values(), *lidar_2d.values())), f"{name}: a 2D lidar sees it"
            continue
        compare("2D lidar (raytrace_3d)", name, lidar_3d, seen, tol)
        compare("2D lidar", name, lidar_2d, phys, tol)
    assert not problems, f"{len(problems)} disagreements:\n" + "\n".join(problems[:40])
