"""<element class="occupancy_grid">: image / ROS yaml / MRPT gridmap maps, errors at the <file> line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from mvsim_core.elements.occupancy_grid import OccupancyGrid, map_format
from mvsim_core.errors import WorldFileError


def test_demo_world2_png_at_0_2(build, worlds_dir: Path):
    png = worlds_dir / "mvsim_tutorial" / "demo_world2.png"
    e, ctx = build(f'<element class="occupancy_grid">\n <file>{png}</file>\n <resolution>0.20</resolution>\n'
                   f' <centerpixel_x>160</centerpixel_x>\n <centerpixel_y>100</centerpixel_y>\n</element>')
    assert isinstance(e, OccupancyGrid) and e.format == "image"
    g = e.grid
    assert (g.nx, g.ny) == (320, 200)
    assert g.resolution == pytest.approx(0.20)
    assert (g.x_min, g.y_min) == pytest.approx((-32.0, -20.0))
    assert (g.x_max, g.y_max) == pytest.approx((32.0, 20.0))
    assert e.summary().startswith("occupancy_grid demo_world2.png 320x200 cells @ 0.20 m")
    assert ctx.warnings == []


def test_defaults(build, worlds_dir: Path):
    png = worlds_dir / "mvsim_tutorial" / "demo_world2.png"
    e, _ = build(f'<element class="occupancy_grid"><file>{png}</file></element>')
    p = e.params
    assert p.resolution == 0.10 and p.centerpixel_x == -1.0 and p.centerpixel_y == -1.0
    assert p.show_collisions is True and p.restitution == 0.01 and p.lateral_friction == 0.5
    assert e.grid.resolution == pytest.approx(0.10)
    assert (e.grid.nx, e.grid.ny) == (320, 200)


def test_relative_path_and_occupancy_values(build, tmp_path: Path):
    img = np.full((4, 6), 255, dtype=np.uint8)
    img[0, 0] = 0  # top-left pixel black = occupied; it is the top row, i.e. the largest y
    Image.fromarray(img).save(tmp_path / "m.png")
    e, _ = build('<element class="occupancy_grid"><file>m.png</file><resolution>0.5</resolution></element>')
    g = e.grid
    assert (g.nx, g.ny) == (6, 4)
    assert g.occupancy[3, 0] == pytest.approx(1.0)
    assert g.occupancy[0, 0] == pytest.approx(0.0)


def test_mrpt_gridmap_gz(build, worlds_dir: Path):
    f = worlds_dir / "mvsim_tutorial" / "uma_campus.gridmap.gz"
    e, ctx = build(f'<element class="occupancy_grid"><file>{f}</file></element>')
    assert e.format == "mrpt_gridmap"
    assert (e.grid.nx, e.grid.ny) == (1888, 2738)
    assert e.grid.resolution == pytest.approx(0.08)
    assert ctx.warnings == []


def test_ros_yaml_map_and_ignored_image_params(build, tmp_path: Path):
    Image.fromarray(np.full((10, 20), 254, dtype=np.uint8)).save(tmp_path / "ros.pgm")
    (tmp_path / "ros.yaml").write_text("image: ros.pgm\nresolution: 0.05\norigin: [-1.0, -2.0, 0.0]\nnegate: 0\n"
                                       "occupied_thresh: 0.65\nfree_thresh: 0.196\n")
    e, ctx = build('<element class="occupancy_grid">\n <file>ros.yaml</file>\n <resolution>0.3</resolution>\n'
                   '</element>')
    assert e.format == "ros_yaml"
    assert (e.grid.nx, e.grid.ny) == (20, 10)
    assert e.grid.resolution == pytest.approx(0.05)
    assert (e.grid.x_min, e.grid.y_min) == pytest.approx((-1.0, -2.0))
    assert len(ctx.warnings) == 1 and ":3: <resolution> is ignored for a .yaml map" in ctx.warnings[0]


@pytest.mark.parametrize(("name", "fmt"), [("a.png", "image"), ("a.JPG", "image"), ("b.yaml", "ros_yaml"),
                                           ("b.yml", "ros_yaml"), ("c.gridmap", "mrpt_gridmap"),
                                           ("c.gridmap.gz", "mrpt_gridmap"), ("d.pgm", "image")])
def test_map_format(name, fmt):
    assert map_format(name) == fmt


def test_missing_map_file_error_at_file_line(build, tmp_path: Path):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="occupancy_grid">\n\n <file>nomap.png</file>\n</element>')
    err = ei.value
    assert err.line == 3 and err.file == str(tmp_path / "w.xml")
    assert err.message == f"map file not found: {tmp_path / 'nomap.png'}"


def test_no_file_tag(build):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="occupancy_grid">\n <resolution>1</resolution>\n</element>')
    assert ei.value.line == 1 and "needs a <file>" in ei.value.message


def test_unreadable_image_error_at_file_line(build, tmp_path: Path):
    (tmp_path / "bad.png").write_text("this is not a png")
    with pytest.raises(WorldFileError) as ei:
        build('<element class="occupancy_grid">\n <file>bad.png</file>\n</element>')
    assert ei.value.line == 2 and "bad.png" in ei.value.message and "cannot decode image" in ei.value.message


def test_bad_yaml_reports_asset_message(build, tmp_path: Path):
    (tmp_path / "m.yaml").write_text("image: x.pgm\n")
    with pytest.raises(WorldFileError) as ei:
        build('<element class="occupancy_grid">\n <file>m.yaml</file>\n</element>')
    assert ei.value.line == 2 and "missing required key 'resolution'" in ei.value.message


@pytest.mark.parametrize("value", ["0", "-0.1"])
def test_resolution_must_be_positive(build, worlds_dir: Path, value: str):
    png = worlds_dir / "mvsim_tutorial" / "demo_world2.png"
    with pytest.raises(WorldFileError) as ei:
        build(f'<element class="occupancy_grid">\n <file>{png}</file>\n\n <resolution>{value}</resolution>\n'
              f'</element>')
    assert ei.value.line == 4 and "<resolution> must be greater than 0 m" in ei.value.message


def test_copies_of_one_map_share_one_read_only_grid_charged_once(build, worlds_dir: Path):
    from mvsim_core.xml.context import ParseContext

    f = worlds_dir / "mvsim_tutorial" / "uma_campus.gridmap.gz"
    ctx = ParseContext()
    a, _ = build(f'<element class="occupancy_grid"><file>{f}</file></element>', ctx)
    b, _ = build(f'<element class="occupancy_grid"><file>{f}</file></element>', ctx)
    assert a.grid is b.grid and not a.grid.occupancy.flags.writeable
    cells = 1888 * 2738
    assert ctx.budget.memory == 4 * cells + 2 * cells  # one grid (float32), two collision masks (1 B per cell)
    assert ctx.budget.biggest() == ("1 occupancy grid (19.7 MiB, at w.xml:1), 2 occupancy grid collision masks "
                                    "(9.86 MiB, the first at w.xml:1)")


def test_the_load_budget_refuses_copies_of_a_big_map_naming_contributors(tmp_path: Path, worlds_dir: Path):
    import mvsim_core as mv

    src = worlds_dir / "mvsim_tutorial" / "uma_campus.gridmap.gz"
    els = "".join(f'<element class="occupancy_grid"><file>{src}</file></element>\n' for _ in range(200))
    w = tmp_path / "many.world.xml"
    w.write_text(f'<mvsim_world version="1.0">\n{els}</mvsim_world>\n')
    with pytest.raises(WorldFileError) as ei:
        mv.load_world(w, env={"MVSIM_MAX_LOAD_MEMORY": "100MiB"})
    assert ei.value.line == 18
    assert ei.value.message == (
        "occupancy grid collision mask would bring this load to an estimated 104 MiB of memory: more than the load "
        "budget of 100 MiB (biggest so far: 17 occupancy grid collision masks (83.8 MiB, the first at "
        "many.world.xml:2), 1 occupancy grid (19.7 MiB, at many.world.xml:2), 16 world elements (128 KiB, the "
        "first at many.world.xml:2)); set the environment variable MVSIM_MAX_LOAD_MEMORY to raise it")
