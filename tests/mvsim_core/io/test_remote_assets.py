"""model_uri resolution: local paths, and remote downloads from a loopback HTTP server only (zip packages, cache,
offline mode, negative cache, timeouts, zip-slip protection)."""

from __future__ import annotations

import hashlib
import io
import json
import threading
import time
import zipfile
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mvsim_core.io import remote_assets
from mvsim_core.io.remote_assets import ResolvedAsset, resolve_model_uri, split_zip_uri


class Server:
    """A quiet HTTP server on 127.0.0.1 serving ``root``; counts requests; optional per-request delay."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[str] = []
        self.delay = 0.0
        outer = self

        class Handler(SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(outer.root), **kwargs)

            def do_GET(self):  # noqa: N802 (http.server API)
                outer.requests.append(self.path)
                if outer.delay:
                    time.sleep(outer.delay)
                super().do_GET()

            def log_message(self, *args):
                pass

        class QuietServer(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # e.g. broken pipe when a client gave up on a deliberately slow answer

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.closed = False
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.httpd.shutdown()
            self.httpd.server_close()


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    srv = Server(root)
    yield srv
    srv.close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("MVSIM_CACHE_DIR", str(d))
    monkeypatch.setenv("MVSIM_OFFLINE", "0")
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    return d


def make_zip(path: Path, members: dict[str, bytes]) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    path.write_bytes(buf.getvalue())


# ------------------------------------------------------------------------------------------------ local


def test_local_paths(tmp_path):
    model = tmp_path / "models" / "car.dae"
    model.parent.mkdir()
    model.write_text("x")
    r = resolve_model_uri("models/car.dae", tmp_path)
    assert r == ResolvedAsset(model, False, "local file")
    assert resolve_model_uri(str(model), "/somewhere/else").local_path == model
    assert resolve_model_uri(f"file://{model}", tmp_path).local_path == model
    assert resolve_model_uri("file://models/car.dae", tmp_path).local_path == model
    assert resolve_model_uri("  models/../models/car.dae ", tmp_path).local_path == model


def test_missing_local_file(tmp_path):
    r = resolve_model_uri("nope/car.dae", tmp_path)
    assert r.local_path is None and r.remote is False
    assert r.reason == f"file not found: {tmp_path / 'nope' / 'car.dae'}"
    assert resolve_model_uri("  ", tmp_path).reason == "empty model URI"


def test_split_zip_uri():
    assert split_zip_uri("https://h/a/pkg.zip/pkg/m.dae") == ("https://h/a/pkg.zip", "pkg/m.dae")
    assert split_zip_uri("https://h/a/m.dae") == ("https://h/a/m.dae", None)


# ------------------------------------------------------------------------------------------------ remote


def test_plain_file_download_then_cache(server, cache):
    (server.root / "m.dae").write_bytes(b"<COLLADA/>")
    url = f"{server.base}/m.dae"
    r = resolve_model_uri(url, "/irrelevant")
    assert r.remote is True and r.local_path is not None, r.reason
    assert r.local_path.read_bytes() == b"<COLLADA/>"
    assert r.local_path.name == "m.dae"  # extension kept for the mesh loader
    key = hashlib.sha256(url.encode()).hexdigest()
    assert r.local_path.parent == cache / key
    assert r.reason.startswith("downloaded")
    server.close()  # the second resolution must not need the network
    r2 = resolve_model_uri(url, "/irrelevant")
    assert r2.local_path == r.local_path and r2.reason == "cached download"
    assert server.requests == ["/m.dae"]


def test_zip_package_with_inner_path(server, cache):
    make_zip(server.root / "pkg.zip", {"pkg/model.dae": b"DAE", "pkg/textures/t.png": b"PNG"})
    r = resolve_model_uri(f"{server.base}/pkg.zip/pkg/model.dae", ".")
    assert r.local_path is not None, r.reason
    assert r.local_path.read_bytes() == b"DAE"
    assert (r.local_path.parent / "textures" / "t.png").read_bytes() == b"PNG"  # relative refs keep working
    # another file of the same package: served from the same extracted download
    r2 = resolve_model_uri(f"{server.base}/pkg.zip/pkg/textures/t.png", ".")
    assert r2.local_path is not None and r2.reason == "cached download"
    assert server.requests == ["/pkg.zip"]
    missing = resolve_model_uri(f"{server.base}/pkg.zip/pkg/other.dae", ".")
    assert missing.local_path is None and missing.remote and "not found inside the zip" in missing.reason


def test_offline_mode_uses_cache_only(server, cache, monkeypatch):
    (server.root / "a.dae").write_bytes(b"A")
    url = f"{server.base}/a.dae"
    monkeypatch.setenv("MVSIM_OFFLINE", "1")
    r = resolve_model_uri(url, ".")
    assert r.local_path is None and r.remote is True
    assert "offline" in r.reason and url in r.reason
    assert server.requests == []
    assert not (cache / hashlib.sha256(url.encode()).hexdigest() / "failed.json").exists()
    monkeypatch.setenv("MVSIM_OFFLINE", "0")
    assert resolve_model_uri(url, ".").local_path is not None
    monkeypatch.setenv("MVSIM_OFFLINE", "1")
    assert resolve_model_uri(url, ".").reason == "cached download"


def test_negative_cache(server, cache):
    url = f"{server.base}/missing.dae"
    r = resolve_model_uri(url, ".")
    assert r.local_path is None and r.remote is True
    assert "HTTP 404" in r.reason
    marker = cache / hashlib.sha256(url.encode()).hexdigest() / "failed.json"
    info = json.loads(marker.read_text())
    assert "HTTP 404" in info["reason"] and abs(info["time"] - time.time()) < 60
    t0 = time.perf_counter()
    r2 = resolve_model_uri(url, ".")
    assert time.perf_counter() - t0 < 0.1
    assert "cached failure" in r2.reason and "HTTP 404" in r2.reason
    assert len(server.requests) == 1
    # after one hour it is retried (and now succeeds)
    info["time"] = time.time() - 3601
    marker.write_text(json.dumps(info))
    (server.root / "missing.dae").write_bytes(b"now here")
    r3 = resolve_model_uri(url, ".")
    assert r3.local_path is not None and r3.local_path.read_bytes() == b"now here"
    assert not marker.exists()
    assert len(server.requests) == 2


def test_unreachable_server_fails_fast(cache, server):
    port = server.httpd.server_address[1]
    server.close()  # nothing listens there any more
    t0 = time.perf_counter()
    r = resolve_model_uri(f"http://127.0.0.1:{port}/x.zip/x/y.dae", ".")
    assert time.perf_counter() - t0 < 3.5
    assert r.local_path is None and r.remote is True and "failed" in r.reason


def test_download_timeout(server, cache, monkeypatch):
    monkeypatch.setattr(remote_assets, "DOWNLOAD_TIMEOUT_S", 0.3)
    (server.root / "slow.dae").write_bytes(b"S")
    server.delay = 1.5
    t0 = time.perf_counter()
    r = resolve_model_uri(f"{server.base}/slow.dae", ".")
    assert time.perf_counter() - t0 < 1.2
    assert r.local_path is None and "failed" in r.reason


@pytest.mark.parametrize("evil", ["../evil.txt", "/abs_evil.txt", "pkg/../../evil.txt", "C:/evil.txt"])
def test_zip_slip_rejected(server, cache, tmp_path, evil):
    make_zip(server.root / "bad.zip", {"pkg/model.dae": b"DAE", evil: b"pwned"})
    r = resolve_model_uri(f"{server.base}/bad.zip/pkg/model.dae", ".")
    assert r.local_path is None and r.remote is True
    assert "unsafe path" in r.reason
    assert not list(tmp_path.rglob("evil.txt")) and not list(tmp_path.rglob("abs_evil.txt"))
    assert not Path("/abs_evil.txt").exists()
    entry = cache / hashlib.sha256(f"{server.base}/bad.zip".encode()).hexdigest()
    assert not (entry / "extracted").exists()
    assert (entry / "failed.json").exists()


def test_unsafe_inner_path_and_bad_zip(server, cache):
    r = resolve_model_uri(f"{server.base}/p.zip/../../etc/passwd", ".")
    assert r.local_path is None and "unsafe path" in r.reason and server.requests == []
    (server.root / "notzip.zip").write_bytes(b"definitely not a zip")
    r = resolve_model_uri(f"{server.base}/notzip.zip/a/b.dae", ".")
    assert r.local_path is None and "cannot extract" in r.reason


def test_unusable_cache_folder_never_raises(server, cache, tmp_path, monkeypatch):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    monkeypatch.setenv("MVSIM_CACHE_DIR", str(blocker))
    (server.root / "m.dae").write_bytes(b"M")
    r = resolve_model_uri(f"{server.base}/m.dae", ".")
    assert r.local_path is None and r.remote is True and r.reason


# ------------------------------------------------------------------------------------------------ mirror
SITE = "https://mrpt.github.io/mvsim-models/"


def test_mirror_files_and_zips_come_before_the_cache_and_network(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "sub").mkdir(parents=True)
    (mirror / "sub" / "a b.dae").write_bytes(b"dae")
    make_zip(mirror / "pkg.zip", {"pkg/model.stl": b"solid", "pkg/tex.png": b"png"})
    monkeypatch.setenv("MVSIM_ASSET_MIRROR", str(mirror))
    monkeypatch.setenv("MVSIM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MVSIM_OFFLINE", "1")
    r = resolve_model_uri(SITE + "sub/a%20b.dae", tmp_path)
    assert r.local_path == mirror / "sub" / "a b.dae" and r.remote and r.reason.startswith("asset mirror")
    r = resolve_model_uri("http://mrpt.github.io/mvsim-models/pkg.zip/pkg/model.stl", tmp_path)
    assert r.local_path is not None and r.local_path.read_bytes() == b"solid"
    assert (tmp_path / "cache") in r.local_path.parents  # unpacked into the cache, as a download would be
    # not in the mirror: offline, nothing else to try
    r = resolve_model_uri(SITE + "other.dae", tmp_path)
    assert r.local_path is None and "offline mode" in r.reason
    # another site is never looked up in the mirror, and paths cannot leave it
    (tmp_path / "secret.dae").write_bytes(b"x")
    assert resolve_model_uri("https://example.com/sub/a%20b.dae", tmp_path).local_path is None
    assert resolve_model_uri(SITE + "..%2Fsecret.dae", tmp_path).local_path is None


def test_without_mirror_the_models_are_missing_offline(tmp_path, no_asset_mirror):
    r = resolve_model_uri(SITE + "turtlebot3.zip/turtlebot3/burger_base.dae", tmp_path)
    assert r.local_path is None and "offline mode" in r.reason


@pytest.mark.parametrize("name", ["demo_turtlebot_world", "demo_articulated_vehicle", "demo_elevation_map",
                                  "demo_camera", "mvsim_slam"])
def test_the_shared_worlds_load_every_asset_from_the_mirror(worlds_dir, name):
    """Issue 17: with the mirror (the test suite's default) the upstream worlds miss nothing. (The six files that
    ../shared/assets/README.md lists as absent are used by none of these worlds.)"""
    import mvsim_core as mv

    w = mv.load_world(worlds_dir / "mvsim_tutorial" / f"{name}.world.xml")
    assert w.missing_assets == {}
