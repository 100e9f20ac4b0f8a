"""<element class="elevation_map">: height sources, placement, triangle interpolation, smoothing, errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mvsim_core.elements.elevation_map import ElevationMap, smooth, triangle_height
from mvsim_core.errors import WorldFileError

# rows <-> +X, cols <-> +Y; resolution 2 m, default corner = (-2, -2)
MATRIX = "[0 1 2; 3 5 4; 6 7 9]"


def matrix_map(build, extra: str = ""):
    e, ctx = build(f'<element class="elevation_map">\n <resolution>2</resolution>\n'
                   f' <elevation_data_matrix>{MATRIX}</elevation_data_matrix>\n{extra}</element>')
    assert isinstance(e, ElevationMap)
    return e, ctx


def test_matrix_placement_defaults(build):
    e, ctx = matrix_map(build)
    assert e.heights.shape == (3, 3)
    assert e.resolution == 2.0
    assert (e.corner_min_x, e.corner_min_y) == (-2.0, -2.0)  # -LX/2 with LX = (3 - 1) * 2
    assert (e.corner_max_x, e.corner_max_y) == (2.0, 2.0)
    assert e.source == "elevation_data_matrix" and e.source_path is None and e.texture_path is None
    p = e.params
    assert p.elevation_image_min_z == 0.0 and p.elevation_image_max_z == 5.0
    assert p.elevation_data_matrix_scale == 1.0 and p.mesh_color == (0xA0, 0xE0, 0xA0, 0xFF)
    assert p.texture_extension_x == 0.0 and p.model_split_size == 0.0
    assert ctx.warnings == []


def test_default_resolution_is_one_metre(build):
    e, _ = build('<element class="elevation_map"><elevation_data_matrix>[0 0; 0 0; 0 0]</elevation_data_matrix>'
                 '</element>')
    assert e.resolution == 1.0 and (e.corner_min_x, e.corner_min_y) == (-1.0, -0.5)


def test_vertices_rows_along_x(build):
    e, _ = matrix_map(build)
    assert e.elevation_at(-2.0, -2.0) == 0.0
    assert e.elevation_at(0.0, -2.0) == 3.0   # row 1 -> +X
    assert e.elevation_at(-2.0, 0.0) == 1.0   # col 1 -> +Y
    assert e.elevation_at(2.0, -2.0) == 6.0
    assert e.elevation_at(-2.0, 2.0) == 2.0
    assert e.elevation_at(2.0, 2.0) == 9.0    # far corner included


def test_triangle_interpolation_by_hand(build):
    e, _ = matrix_map(build)
    # cell (0, 0): z00=0, z10=3, z01=1, z11=5.
    # (-1.5, -0.5): fx=0.25, fy=0.75 -> above the diagonal, plane through z00, z01, z11: z = 4 fx + 1 fy = 1.75
    assert e.elevation_at(-1.5, -0.5) == pytest.approx(1.75)
    # (-0.5, -1.5): fx=0.75, fy=0.25 -> below the diagonal, plane through z00, z10, z11: z = 3 fx + 2 fy = 2.75
    assert e.elevation_at(-0.5, -1.5) == pytest.approx(2.75)
    # cell (1, 1) centre, on the diagonal: z00=5, z11=9 -> 7 from either triangle
    assert e.elevation_at(1.0, 1.0) == pytest.approx(7.0)
    # not bilinear: bilinear would give (0 + 3 + 1 + 5) / 4 = 2.25 at the centre of cell (0, 0)
    assert e.elevation_at(-1.0, -1.0) == pytest.approx(2.5)


def test_out_of_bounds_is_none(build):
    e, _ = matrix_map(build)
    for x, y in [(2.01, 0.0), (-2.01, 0.0), (0.0, 2.01), (0.0, -2.01), (50.0, 50.0)]:
        assert e.elevation_at(x, y) is None


def test_vectorised_matches_scalar(build):
    e, _ = matrix_map(build)
    rng = np.random.default_rng(0)
    xs, ys = rng.uniform(-2.5, 2.5, 200), rng.uniform(-2.5, 2.5, 200)
    zs = e.elevations_at(xs, ys)
    for x, y, z in zip(xs, ys, zs, strict=True):
        s = e.elevation_at(x, y)
        assert (s is None and np.isnan(z)) or s == pytest.approx(z)


def test_triangle_height_function():
    assert triangle_height(0.0, 3.0, 1.0, 5.0, 0.0, 1.0) == 1.0
    assert triangle_height(0.0, 3.0, 1.0, 5.0, 1.0, 0.0) == 3.0
    assert triangle_height(0.0, 3.0, 1.0, 5.0, 1.0, 1.0) == 5.0


def test_corner_scale_and_multiline_matrix(build):
    e, _ = build('<element class="elevation_map">\n <resolution>4.0</resolution>\n'
                 ' <elevation_data_matrix>\n   [1 2;\n    3 4\n   ]</elevation_data_matrix>\n'
                 ' <elevation_data_matrix_scale>0.5</elevation_data_matrix_scale>\n'
                 ' <corner_min_x>24</corner_min_x> <corner_min_y>-2</corner_min_y>\n</element>')
    assert e.heights.tolist() == [[0.5, 1.0], [1.5, 2.0]]
    assert (e.corner_min_x, e.corner_min_y, e.corner_max_x, e.corner_max_y) == (24.0, -2.0, 28.0, 2.0)
    assert e.elevation_at(28.0, 2.0) == 2.0 and e.elevation_at(23.9, 0.0) is None


def test_elevation_image(build, worlds_dir: Path):
    img = worlds_dir / "mvsim_tutorial" / "elevation_mesh1.png"
    e, _ = build(f'<element class="elevation_map"><resolution>0.5</resolution>'
                 f'<elevation_image>{img}</elevation_image><elevation_image_min_z>-1.0</elevation_image_min_z>'
                 f'<elevation_image_max_z>2.0</elevation_image_max_z></element>')
    assert e.heights.shape == (100, 100)
    assert e.heights.min() == pytest.approx(-1.0) and e.heights.max() == pytest.approx(2.0)
    assert (e.corner_min_x, e.corner_min_y) == (-24.75, -24.75)
    assert e.source_path == img and "elevation_mesh1.png 100x100 vertices @ 0.5 m" in e.summary()


def test_dem_file_with_offsets(build, tmp_path: Path):
    lines = [f"{x} {y} {0.1 * x} 0 0 0" for x in range(5) for y in range(3)]
    (tmp_path / "dem.txt").write_text("\n".join(lines) + "\n")
    e, _ = build('<element class="elevation_map"><dem_xyzrgb_file>dem.txt</dem_xyzrgb_file>'
                 '<resolution>1.0</resolution><dem_offset_x>10</dem_offset_x><dem_offset_z>1</dem_offset_z>'
                 '</element>')
    assert e.source == "dem_xyzrgb_file"
    assert (e.corner_min_x, e.corner_min_y) == (10.0, 0.0)  # the DEM's own corner, shifted
    assert e.heights.shape == (4, 2)
    assert e.heights[0, 0] == pytest.approx(1.0) and e.heights[-1, 0] > e.heights[0, 0]


def test_smoothing_kernel(build):
    e, _ = build('<element class="elevation_map"><elevation_data_matrix>[0 0 0 0 0; 0 0 0 0 0; 0 0 5 0 0; '
                 '0 0 0 0 0; 0 0 0 0 0]</elevation_data_matrix>'
                 '<apply_kernel>[0 0.2 0; 0.2 0.2 0.2; 0 0.2 0]</apply_kernel></element>')
    h = e.heights
    assert h[2, 2] == pytest.approx(1.0) and h[1, 2] == pytest.approx(1.0) and h[2, 3] == pytest.approx(1.0)
    assert h[1, 1] == 0.0 and h[0, 0] == 0.0


def test_smooth_keeps_flat_terrain_flat_up_to_the_edges():
    out = smooth(np.full((4, 6), 2.5), np.full((3, 3), 1 / 9))
    assert np.allclose(out, 2.5)


def test_remote_texture_is_a_warning(build):
    e, ctx = matrix_map(build, " <texture_image>https://example.invalid/tex.png</texture_image>\n"
                               " <texture_image_rotate>-90</texture_image_rotate>\n")
    assert e.texture_path is None
    assert "https://example.invalid/tex.png" in ctx.missing_assets
    assert any(":4: asset not available: https://example.invalid/tex.png" in w for w in ctx.warnings)


# ------------------------------------------------------------------ errors
def test_no_height_source(build):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="elevation_map">\n <resolution>1</resolution>\n</element>')
    assert ei.value.line == 1 and "needs one height source" in ei.value.message


def test_two_height_sources(build):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="elevation_map">\n <elevation_data_matrix>[0 0; 0 0]</elevation_data_matrix>\n'
              ' <elevation_image>x.png</elevation_image>\n</element>')
    assert ei.value.line == 3 and "exactly one height source" in ei.value.message


@pytest.mark.parametrize(("text", "fragment"), [("[1 2; 3]", "different lengths"),
                                                ("[1 two; 3 4]", "'two' is not a number"),
                                                ("[1 2; 3 4", "unbalanced brackets")])
def test_malformed_matrix(build, text: str, fragment: str):
    with pytest.raises(WorldFileError) as ei:
        build(f'<element class="elevation_map">\n\n <elevation_data_matrix>{text}</elevation_data_matrix>\n'
              f'</element>')
    assert ei.value.line == 3 and "bad height matrix" in ei.value.message and fragment in ei.value.message


def test_matrix_needs_one_cell(build):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="elevation_map">\n <elevation_data_matrix>[1 2 3]</elevation_data_matrix>\n'
              '</element>')
    assert ei.value.line == 2 and "at least 2x2" in ei.value.message


@pytest.mark.parametrize("value", ["0", "-4"])
def test_bad_resolution(build, value: str):
    with pytest.raises(WorldFileError) as ei:
        build(f'<element class="elevation_map">\n <elevation_data_matrix>[0 0; 0 0]</elevation_data_matrix>\n'
              f' <resolution>{value}</resolution>\n</element>')
    assert ei.value.line == 3 and "<resolution> must be greater than 0 m" in ei.value.message


def test_missing_elevation_image(build, tmp_path: Path):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="elevation_map">\n <elevation_image>nope.png</elevation_image>\n</element>')
    assert ei.value.line == 2 and ei.value.message == f"elevation image not found: {tmp_path / 'nope.png'}"


def test_equal_image_z_range(build, worlds_dir: Path):
    img = worlds_dir / "mvsim_tutorial" / "elevation_mesh1.png"
    with pytest.raises(WorldFileError) as ei:
        build(f'<element class="elevation_map">\n <elevation_image>{img}</elevation_image>\n'
              f' <elevation_image_min_z>1</elevation_image_min_z>\n'
              f' <elevation_image_max_z>1</elevation_image_max_z>\n</element>')
    assert ei.value.line == 4 and "must differ" in ei.value.message


@pytest.mark.parametrize(("kernel", "fragment"), [("[1 0; 0 0]", "odd size"), ("[1 1 1; 1 1 1; 1 1 1]", "sum to 1"),
                                                  ("[1 2", "bad <apply_kernel>")])
def test_bad_kernel(build, kernel: str, fragment: str):
    with pytest.raises(WorldFileError) as ei:
        matrix_map(build, f" <apply_kernel>{kernel}</apply_kernel>\n")
    assert ei.value.line == 4 and fragment in ei.value.message


def test_kernel_too_large(build):
    kernel = "[" + "; ".join(" ".join(["0.0025"] * 21) for _ in range(21)) + "]"
    with pytest.raises(WorldFileError) as ei:
        matrix_map(build, f" <apply_kernel>{kernel}</apply_kernel>\n")
    assert ei.value.line == 4 and ei.value.message == (
        "<apply_kernel> of 21x21 on 9 heights takes 3.97e+03 multiply-adds; the limits are 15x15 and 5e+08: use a "
        "smaller kernel")


def test_heights_beyond_the_number_range(build):
    """1e300 is a valid number, times a scale of 1e9 it is inf: refused at the source, not a NaN terrain later."""
    with pytest.raises(WorldFileError) as ei:
        build('<element class="elevation_map">\n <elevation_data_matrix>[1 1; 1 1e300]</elevation_data_matrix>\n'
              ' <elevation_data_matrix_scale>1e9</elevation_data_matrix_scale>\n</element>')
    assert ei.value.line == 2 and ei.value.message == (
        "elevation_map height [1, 1] is inf m; heights must be finite and at most 1e+09 m in magnitude (check the "
        "source and its scale or offset)")


def test_dem_grid_over_the_memory_budget(build, tmp_path: Path):
    (tmp_path / "dem.txt").write_text("0 0 1 0 0 0\n1000 1000 2 0 0 0\n")
    with pytest.raises(WorldFileError) as ei:
        build('<element class="elevation_map">\n <dem_xyzrgb_file>dem.txt</dem_xyzrgb_file>\n'
              ' <resolution>0.01</resolution>\n</element>')
    assert ei.value.line == 2 and ei.value.message == (
        f"{tmp_path / 'dem.txt'}: a height grid of 100000 x 100000 cells (1000 x 1000 m at 0.01 m) needs 447 GiB, "
        f"more than the 256 MiB budget for one array sized by a world file; use a coarser <resolution>")


def test_bad_texture_rotation(build):
    with pytest.raises(WorldFileError) as ei:
        matrix_map(build, " <texture_image_rotate>45</texture_image_rotate>\n")
    assert ei.value.line == 4 and "must be 0, 90, -90 or 180" in ei.value.message


def shipped_map(worlds_dir: Path, corner: str = "") -> str:
    src = worlds_dir / "mvsim_tutorial" / "elevation_mesh1.png"  # 100 x 100 pixels
    return (f'<element class="elevation_map"><resolution>0.5</resolution><elevation_image>{src}</elevation_image>'
            f'{corner}</element>')


def test_copies_of_one_map_share_one_read_only_grid_charged_once(build, worlds_dir: Path):
    from mvsim_core.memory_budget import ELEVATION_CELL_BYTES, ELEVATION_PLACEMENT_CELL_BYTES
    from mvsim_core.xml.context import ParseContext

    ctx = ParseContext()
    a, _ = build(shipped_map(worlds_dir), ctx)
    b, _ = build(shipped_map(worlds_dir), ctx)  # same place
    c, _ = build(shipped_map(worlds_dir, "<corner_min_x>100</corner_min_x>"), ctx)  # elsewhere
    d, _ = build(shipped_map(worlds_dir, "<elevation_image_max_z>3</elevation_image_max_z>"), ctx)  # other z range
    assert a.heights is b.heights is c.heights and np.shares_memory(a.heights, c.heights)
    assert d.heights is not a.heights and not np.shares_memory(a.heights, d.heights)
    assert not a.heights.flags.writeable and not d.heights.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        a.heights[0, 0] = 1.0
    assert (c.corner_min_x, a.corner_min_x) == (100.0, -24.75)
    cells = 100 * 100
    # two grids (a's and d's), three placements (a = b, c, d)
    assert (ELEVATION_CELL_BYTES, ELEVATION_PLACEMENT_CELL_BYTES) == (136, 128)
    assert ctx.budget.memory == 2 * 136 * cells + 3 * 128 * cells
    assert ctx.budget.biggest() == ("3 elevation map placements (3.66 MiB, the first at w.xml:1), 2 elevation maps "
                                    "(2.59 MiB, the first at w.xml:1)")


def test_a_matrix_map_repeated_shares_its_grid(build):
    a, _ = matrix_map(build)
    b, _ = matrix_map(build)
    c, _ = matrix_map(build, " <elevation_data_matrix_scale>2</elevation_data_matrix_scale>\n")
    assert a.heights is b.heights and c.heights is not a.heights
    assert c.heights[2, 2] == 18.0 and a.heights[2, 2] == 9.0


def test_the_load_budget_refuses_copies_at_many_places_naming_contributors(tmp_path: Path, worlds_dir: Path):
    import mvsim_core as mv

    els = "".join(shipped_map(worlds_dir, f"<corner_min_x>{60 * k}</corner_min_x>") + "\n" for k in range(200))
    w = tmp_path / "many.world.xml"
    w.write_text(f'<mvsim_world version="1.0">\n{els}</mvsim_world>\n')
    with pytest.raises(WorldFileError) as ei:
        mv.load_world(w, env={"MVSIM_MAX_LOAD_MEMORY": "100MiB"})
    assert (Path(ei.value.file).name, ei.value.line) == ("many.world.xml", 82)
    assert ei.value.message == (
        "elevation map elevation_mesh1.png placement would bring this load to an estimated 101 MiB of memory: more "
        "than the load budget of 100 MiB (biggest so far: 81 elevation map placements (98.9 MiB, the first at "
        "many.world.xml:2), 1 elevation map (1.3 MiB, at many.world.xml:2), 80 world elements (640 KiB, the first at "
        "many.world.xml:2)); set the environment variable MVSIM_MAX_LOAD_MEMORY to raise it")


def test_an_image_map_is_charged_from_its_header_before_decoding(build, tmp_path: Path):
    from PIL import Image

    from mvsim_core.xml.context import ParseContext
    from mvsim_core.xml.limits import LoadLimits

    Image.fromarray(np.zeros((3000, 2000), dtype=np.uint8)).save(tmp_path / "big.png")  # 6e6 heights: 778 MiB
    ctx = ParseContext(limits=LoadLimits(memory=100 << 20))
    with pytest.raises(WorldFileError) as ei:
        build(f'<element class="elevation_map">\n<elevation_image>{tmp_path / "big.png"}</elevation_image>'
              f'</element>', ctx)
    assert ei.value.line == 2
    assert ei.value.message.startswith("elevation map big.png would bring this load to an estimated 778 MiB of "
                                       "memory: more than the load budget of 100 MiB")
    assert "MVSIM_MAX_LOAD_MEMORY" in ei.value.message
    from mvsim_core.elements.elevation_map import _SHARED

    assert not [k for k in _SHARED.keys() if "big.png" in str(k[1])]  # refused before it was decoded
