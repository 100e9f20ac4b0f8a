"""Images and ray counts are checked at load (issue 14, item 1): a camera 1e9 pixels wide, or a lidar of 1e9 rays, is
a WorldFileError at the tag that sized it — naming the size, the budget and what to change — instead of a GLError or
a MemoryError at the first sample."""

from __future__ import annotations

import pytest

from mvsim_core.errors import WorldFileError
from mvsim_core.sensors.camera import MAX_IMAGE_SIDE

BUDGET = "more than the 256 MiB budget for one array sized by a world file"


def _error(make_sensor, xml: str) -> WorldFileError:
    with pytest.raises(WorldFileError) as e:
        make_sensor(xml)
    return e.value


def test_camera_side_beyond_what_opengl_guarantees(make_sensor, xml_file):
    e = _error(make_sensor, '<sensor class="camera">\n<ncols>16385</ncols>\n<nrows>10</nrows></sensor>')
    assert (e.file, e.line) == (xml_file, 2)
    assert e.message == ("<ncols> is 16385 px; an image is at most 16384 px wide and high (what every OpenGL 4 "
                         "renderer can draw)")
    e = _error(make_sensor, '<sensor class="camera"><ncols>10</ncols>\n\n<nrows>1e9</nrows></sensor>')
    assert e.line == 3 and e.message.startswith("<nrows> is 1000000000 px;")


def test_camera_image_over_the_memory_budget(make_sensor, xml_file):
    e = _error(make_sensor, '<sensor class="camera">\n<ncols>9000</ncols><nrows>9000</nrows></sensor>')
    assert (e.file, e.line) == (xml_file, 2)
    assert e.message == f"a 9000 x 9000 image needs 1.81 GiB, {BUDGET}; use a smaller <ncols> or <nrows>"


def test_largest_accepted_images(make_sensor):
    cam, _ = make_sensor(f'<sensor class="camera"><ncols>{MAX_IMAGE_SIDE}</ncols><nrows>512</nrows></sensor>')
    assert (cam.width, cam.height) == (16384, 512)
    cam, _ = make_sensor('<sensor class="camera"><ncols>3840</ncols><nrows>2160</nrows></sensor>')  # 4K
    assert cam.width * cam.height == 8294400


def test_rgbd_checks_the_images_it_senses(make_sensor):
    e = _error(make_sensor, '<sensor class="rgbd_camera">\n<depth_ncols>8000</depth_ncols>\n'
                            '<depth_nrows>8000</depth_nrows></sensor>')
    assert e.line == 2
    assert e.message == (f"a 8000 x 8000 image needs 1.43 GiB, {BUDGET}; use a smaller <depth_ncols> or "
                         f"<depth_nrows>")
    e = _error(make_sensor, '<sensor class="rgbd_camera"><sense_depth>false</sense_depth>\n\n'
                            '<rgb_nrows>20000</rgb_nrows></sensor>')
    assert e.line == 3 and e.message.startswith("<rgb_nrows> is 20000 px;")
    cam, _ = make_sensor('<sensor class="rgbd_camera"><sense_rgb>false</sense_rgb><rgb_ncols>1e9</rgb_ncols></sensor>')
    assert cam.depth_intrinsics.ncols == 640  # a size of what is not sensed allocates nothing


def test_lidar2d_rays_over_the_memory_budget(make_sensor, xml_file):
    e = _error(make_sensor, '<sensor class="laser">\n<nrays>1e9</nrays></sensor>')
    assert (e.file, e.line) == (xml_file, 2)
    assert e.message == f"a 2D lidar of 1000000000 rays needs 179 GiB, {BUDGET}; use a smaller <nrays>"
    lidar, _ = make_sensor('<sensor class="laser"><nrays>1000000</nrays></sensor>')
    assert lidar.nrays == 1000000


def test_lidar3d_rays_over_the_memory_budget_point_at_the_larger_count(make_sensor):
    e = _error(make_sensor, '<sensor class="lidar3d">\n<horz_nrays>100000</horz_nrays>\n'
                            '<vert_nrays>1000</vert_nrays></sensor>')
    assert e.line == 2
    assert e.message == (f"a 3D lidar of 1000 x 100000 rays needs 11.9 GiB, {BUDGET}; use a smaller <horz_nrays> "
                         f"or <vert_nrays>")
    e = _error(make_sensor, '<sensor class="lidar3d">\n<horz_nrays>2</horz_nrays>\n'
                            '<vert_nrays>1e9</vert_nrays></sensor>')
    assert e.line == 3
    lidar, _ = make_sensor('<sensor class="lidar3d"><horz_nrays>3600</horz_nrays><vert_nrays>128</vert_nrays>'
                           '</sensor>')
    assert len(lidar.ray_directions()) == 460800  # the densest real sensors fit (Hesai Pandar128: 128 x 3600)
