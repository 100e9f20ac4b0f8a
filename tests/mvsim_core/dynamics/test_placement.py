"""Where objects start (mvsim_core.dynamics.placement): walls on the floor, blocks on the world elements only, one
adjust per object, and the same poses before the physics is built (``mvsim check``) as after."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import mvsim_core as mv
from mvsim_core.world import Spawn

COLUMN = ('<block:class name="column"><static>true</static><zmin>0</zmin><zmax>{h}</zmax>'
          '<geometry type="cylinder" radius="0.15" length="{h}" vertex_count="16"/></block:class>')
ROBOT = ('<dynamics class="differential"><l_wheel pos="0 0.2" diameter="0.2" width="0.05"/>'
         '<r_wheel pos="0 -0.2" diameter="0.2" width="0.05"/><chassis zmin="0.05" zmax="0.6"/></dynamics>')
WALL_THROUGH_ORIGIN = ('<walls><wallThickness>0.3</wallThickness><wallHeight>1.0</wallHeight>'
                       '<shape><pt>2 -1</pt> <pt>2 1</pt></shape></walls>')


def test_walls_stay_on_the_floor_whatever_lies_at_the_origin(load: Callable[..., mv.World]) -> None:
    """Upstream's turtlebot world: the walls' pose origin (0, 0) lies inside a 0.5 m column; they used to start on
    its top, 0.5 m up, for every 3D sensor."""
    w = load(COLUMN.format(h=0.5) + '<block class="column"><init_pose>0 0 0</init_pose></block>'
             + WALL_THROUGH_ORIGIN)
    w.start()
    assert w.blocks["wall_0001"].pose == (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    assert w.extents()["wall_0001"].as_tuple() == pytest.approx((1.85, 2.15, -1.0, 1.0, 0.0, 1.0))


def test_a_block_on_another_block_starts_on_the_floor(load: Callable[..., mv.World]) -> None:
    """A column written at a wall's end (upstream's turtlebot world) overlaps the wall in x-y: the 2D physics
    collides them whatever their heights, so it cannot stand on the wall's top (it did: z 1..3 for the 3D sensors)."""
    w = load(WALL_THROUGH_ORIGIN + COLUMN.format(h=2.0) + '<block class="column"><init_pose>2 1 0</init_pose></block>')
    w.start()
    assert w.blocks["block001"].pose[2] == 0.0
    assert (w.extents()["block001"].z_min, w.extents()["block001"].z_max) == (0.0, 2.0)


def test_blocks_and_vehicles_still_stand_on_the_elements(load: Callable[..., mv.World]) -> None:
    """Horizontal planes (a mezzanine) are ground for blocks and vehicles alike."""
    w = load('<element class="horizontal_plane"><x_min>-5</x_min><x_max>5</x_max><y_min>-5</y_min><y_max>5</y_max>'
             '<z>0</z></element>'
             '<element class="horizontal_plane"><x_min>1</x_min><x_max>3</x_max><y_min>-1</y_min><y_max>1</y_max>'
             '<z>0.4</z></element>'
             + COLUMN.format(h=1.0) + '<block class="column"><init_pose>2 0 0</init_pose></block>'
             '<vehicle name="v"><init_pose>2.2 0.3 0</init_pose>' + ROBOT + '</vehicle>')
    w.start()
    assert w.blocks["block001"].pose[2] == pytest.approx(0.4)
    assert w.vehicles["v"].pose[2] == pytest.approx(0.4)
    assert w.extents()["block001"].z_max == pytest.approx(1.4)


def test_a_rebuilt_physics_does_not_lift_objects_again(load: Callable[..., mv.World]) -> None:
    """The adjust looks zmax/2 above the written z: from the adjusted z it would find the next floor up. A spawn
    rebuilds the physics; the objects already placed keep their heights."""
    floors = "".join(f'<element class="horizontal_plane"><x_min>-5</x_min><x_max>5</x_max><y_min>-5</y_min>'
                     f'<y_max>5</y_max><z>{z}</z></element>' for z in (0.0, 0.4, 1.0))
    w = load(floors + COLUMN.format(h=1.6) + '<block class="column"><init_pose>0 0 0</init_pose></block>'
             '<vehicle name="v"><init_pose>3 0 0</init_pose>' + ROBOT + '</vehicle>')
    w.start()
    assert w.blocks["block001"].pose[2] == pytest.approx(0.4)  # the highest floor under 0 + 0.8 m
    z_vehicle = w.vehicles["v"].pose[2]
    assert z_vehicle == pytest.approx(0.4)  # settled on its wheels, which find the 0.4 m floor
    w.spawn_many([Spawn('<block class="column"/>', "extra", (-3.0, 0.0, 0.0))])
    w.step()
    assert w.blocks["block001"].pose[2] == pytest.approx(0.4)
    assert w.blocks["extra"].pose[2] == pytest.approx(0.4)
    assert w.vehicles["v"].pose[2] == pytest.approx(z_vehicle)


@pytest.mark.parametrize("rel", ["mvsim_tutorial/demo_turtlebot_world", "mvsim_tutorial/demo_jackal",
                                 "mvsim_tutorial/demo_elevation_map", "mvsim_tutorial/demo_articulated_vehicle"])
def test_extents_before_start_are_where_the_physics_puts_everything(worlds_dir, rel: str) -> None:
    """What ``mvsim check`` reports (no physics yet) equals what the started world holds: the elevation adjust, the
    keyframe tracks at t = 0 (jackal's animated block), the vehicles' settle on their wheels (the tractor-trailer
    on an elevation map)."""
    w = mv.load_world(worlds_dir / f"{rel}.world.xml")
    before = w.extents()
    w.start()
    after = w.extents()
    assert before.keys() == after.keys()
    worst = max(before[n].distance(after[n]) for n in before)
    assert worst < 1e-6
