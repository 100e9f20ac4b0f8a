"""Resolution of ``<model_uri>`` values: local paths, ``file://`` URIs and remote ``http(s)://`` assets.

Upstream (``RemoteResourcesManager.cpp``): a URI starting with ``http://`` or ``https://`` is downloaded (``wget``)
into ``~/.cache/mvsim-storage/``; if it contains ``.zip/`` it is split there: the part up to ``.zip`` is downloaded
and unzipped, and the rest is the path of the wanted file inside the archive
(``https://host/models/pkg.zip/pkg/model.dae`` -> ``pkg/model.dae`` inside ``pkg.zip``). ``file://`` is stripped;
anything else is a local path.

Here, additionally:

* Cache directory: ``$MVSIM_CACHE_DIR`` or ``~/.cache/mvsim_ros2/assets``; one sub-directory per download URL, named
  by the SHA-256 of that URL, holding the downloaded file under its original name and, for zips, ``extracted/``.
  Entries are written atomically (temporary name + rename), so a half-finished download is never used.
* ``MVSIM_ASSET_MIRROR=DIR`` (``mvsim ... --asset-mirror DIR``): a local copy of the MVSim model site
  (:data:`MODEL_SITE`, laid out as under its URL). A URI under that site resolves to ``DIR/<path>`` before the cache
  and the network; a zip found there is unpacked into the cache as a downloaded one would be.
* ``MVSIM_OFFLINE=1``: never touch the network; only the mirror and the cache are used.
* Downloads use :mod:`urllib` with a 3 s budget for the whole transfer. Zips are extracted only if every member
  has a safe relative name (no absolute paths, drive letters or ``..``).
* A failed download writes a negative-cache marker (``failed.json`` with the time and the reason); for one hour
  later calls fail immediately with that reason instead of stalling again. Delete the marker to retry sooner.
* Remote problems never raise: the result has ``local_path=None`` and a human-readable ``reason``.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from mvsim_core.io.file_check import file_problem

DOWNLOAD_TIMEOUT_S = 3.0
NEGATIVE_CACHE_TTL_S = 3600.0
MAX_DOWNLOAD_BYTES = 512 * 1024 * 1024
_FAILED_MARKER = "failed.json"
_EXTRACTED = "extracted"
_USER_AGENT = "mvsim_ros2-asset-fetcher/1.0"

MODEL_SITE = "mrpt.github.io/mvsim-models/"
"""Host and path of upstream's model site (after ``http://`` or ``https://``): what ``MVSIM_ASSET_MIRROR`` mirrors."""


@dataclass(frozen=True)
class ResolvedAsset:
    """Outcome of :func:`resolve_model_uri`.

    Attributes:
        local_path: absolute path of the file to load, or None when it is not available.
        remote: True when the URI was an ``http(s)://`` one.
        reason: how it was resolved ("local file", "cached download", "downloaded ...") or why it failed.
    """

    local_path: Path | None
    remote: bool
    reason: str


def cache_dir() -> Path:
    """The asset cache root: ``$MVSIM_CACHE_DIR`` or ``~/.cache/mvsim_ros2/assets``."""
    env = os.environ.get("MVSIM_CACHE_DIR", "").strip()
    return Path(os.path.expanduser(env)).absolute() if env else Path.home() / ".cache" / "mvsim_ros2" / "assets"


def asset_mirror() -> Path | None:
    """The local mirror of :data:`MODEL_SITE`: ``$MVSIM_ASSET_MIRROR`` when set (None otherwise)."""
    env = os.environ.get("MVSIM_ASSET_MIRROR", "").strip()
    return Path(os.path.expanduser(env)).absolute() if env else None


def _mirrored(url: str) -> Path | None:
    """The mirror's copy of ``url`` (a file under the model site), or None when there is no mirror or no copy."""
    mirror = asset_mirror()
    if mirror is None:
        return None
    rest = url.split("://", 1)[-1]
    if not rest.lower().startswith(MODEL_SITE):
        return None
    rel = urllib.parse.unquote(rest[len(MODEL_SITE):])
    if not _safe_member_name(rel):
        return None
    path = mirror / PurePosixPath(rel)
    return path if path.is_file() else None


def is_remote_uri(uri: str) -> bool:
    """True for ``http://`` and ``https://`` URIs (case-insensitive scheme)."""
    low = uri.strip().lower()
    return low.startswith("http://") or low.startswith("https://")


def split_zip_uri(uri: str) -> tuple[str, str | None]:
    """Split ``.../pkg.zip/inner/path`` into ``(".../pkg.zip", "inner/path")``; no ``.zip/`` -> ``(uri, None)``."""
    pos = uri.lower().find(".zip/")
    if pos < 0:
        return uri, None
    return uri[: pos + 4], uri[pos + 5 :]


def resolve_model_uri(uri: str, base_dir: str | Path) -> ResolvedAsset:
    """Map a ``<model_uri>`` value to a local file.

    Args:
        uri: local path (absolute, or relative to ``base_dir``), ``file://path`` or ``http(s)://...`` (optionally
            ``.../file.zip/inner/path``).
        base_dir: directory of the XML file that contains the URI.

    Returns:
        ResolvedAsset. Missing local files give ``(None, False, "file not found: <path>")``; remote failures give
        ``(None, True, <reason>)``. Never raises for missing/unreachable assets.
    """
    text = uri.strip()
    if not text:
        return ResolvedAsset(None, False, "empty model URI")
    if is_remote_uri(text):
        try:
            return _resolve_remote(text)
        except Exception as e:  # safety net (e.g. unusable cache folder): remote problems never raise
            return ResolvedAsset(None, True, f"cannot resolve {text}: {_describe(e)}")
    if text.lower().startswith("file://"):
        text = text[len("file://") :]
    p = Path(os.path.expanduser(text))
    if not p.is_absolute():
        p = Path(base_dir) / p
    p = Path(os.path.abspath(p))
    problem = file_problem(p)
    if problem is None:
        return ResolvedAsset(p, False, "local file")
    if problem == "not found":
        return ResolvedAsset(None, False, f"file not found: {p}")
    return ResolvedAsset(None, False, f"{p} {problem}")


# ------------------------------------------------------------------------------------------------ remote


def _resolve_remote(uri: str) -> ResolvedAsset:
    download_url, inner = split_zip_uri(uri)
    if inner is not None:
        inner = urllib.parse.unquote(inner)
        if not _safe_member_name(inner):
            return ResolvedAsset(None, True, f"unsafe path inside zip URI: {inner!r}")
    entry = cache_dir() / hashlib.sha256(download_url.encode("utf-8")).hexdigest()
    name = _file_name(download_url)
    downloaded = entry / name

    mirrored = _mirrored(download_url)
    if mirrored is not None and inner is None:
        return ResolvedAsset(mirrored, True, f"asset mirror ({mirrored})")
    hit = _from_cache(entry, downloaded, inner, uri)
    if hit is not None:
        return hit
    marker = entry / _FAILED_MARKER
    if mirrored is not None and inner is not None:  # a zip in the mirror: unpacked into the cache
        try:
            entry.mkdir(parents=True, exist_ok=True)
            _extract_zip(mirrored, entry / _EXTRACTED)
        except Exception as e:  # bad/unsafe archive: report, never raise
            return ResolvedAsset(None, True, f"cannot extract {mirrored}: {_describe(e)}")
        hit = _from_cache(entry, downloaded, inner, uri)
        return hit if hit is not None else ResolvedAsset(None, True, f"extraction of {mirrored} left no folder")
    if inner is not None and downloaded.is_file():
        # Downloaded earlier but never extracted (e.g. interrupted): no network needed.
        return _extract_and_lookup(entry, downloaded, inner, uri, download_url, marker, fresh=False)

    failure = _recent_failure(marker)
    if failure is not None:
        return ResolvedAsset(None, True, failure)
    if os.environ.get("MVSIM_OFFLINE", "").strip() == "1":
        return ResolvedAsset(None, True, f"offline mode (MVSIM_OFFLINE=1) and not in the cache: {download_url}")

    try:
        entry.mkdir(parents=True, exist_ok=True)
        _download_with_deadline(download_url, downloaded)
    except Exception as e:  # any network/HTTP/file-system problem: report, never raise
        reason = f"download of {download_url} failed: {_describe(e)}"
        _write_failure(marker, reason)
        return ResolvedAsset(None, True, reason)
    if inner is not None:
        return _extract_and_lookup(entry, downloaded, inner, uri, download_url, marker, fresh=True)
    _clear_failure(marker)
    return ResolvedAsset(downloaded, True, f"downloaded from {download_url}")


def _extract_and_lookup(
    entry: Path, downloaded: Path, inner: str, uri: str, download_url: str, marker: Path, fresh: bool
) -> ResolvedAsset:
    try:
        _extract_zip(downloaded, entry / _EXTRACTED)
    except Exception as e:  # bad/unsafe archive: report, never raise
        reason = f"cannot extract {download_url}: {_describe(e)}"
        _write_failure(marker, reason)
        try:
            downloaded.unlink()  # do not keep a bad archive around; retried after the negative-cache delay
        except OSError:
            pass
        return ResolvedAsset(None, True, reason)
    _clear_failure(marker)
    hit = _from_cache(entry, downloaded, inner, uri, fresh=fresh)
    return hit if hit is not None else ResolvedAsset(None, True, f"extraction of {download_url} left no folder")


def _clear_failure(marker: Path) -> None:
    try:
        marker.unlink()
    except OSError:
        pass


def _from_cache(
    entry: Path, downloaded: Path, inner: str | None, uri: str, fresh: bool = False
) -> ResolvedAsset | None:
    """The cached result for this URI, or None when nothing usable is cached yet."""
    how = f"downloaded from {uri}" if fresh else "cached download"
    if inner is None:
        return ResolvedAsset(downloaded, True, how) if downloaded.is_file() else None
    extracted = entry / _EXTRACTED
    if not extracted.is_dir():
        return None
    target = extracted / PurePosixPath(inner)
    if target.is_file():
        return ResolvedAsset(target, True, how)
    return ResolvedAsset(None, True, f"'{inner}' not found inside the zip of {uri} (cached in {extracted})")


def _file_name(url: str) -> str:
    path = urllib.parse.urlsplit(url).path
    name = posixpath.basename(urllib.parse.unquote(path)).strip()
    if not name or name in (".", "..") or "/" in name or "\\" in name or name == _FAILED_MARKER:
        name = "download.bin"
    return name


def _recent_failure(marker: Path) -> str | None:
    try:
        info = json.loads(marker.read_text(encoding="utf-8"))
        t = float(info["time"])
        reason = str(info.get("reason", "unknown error"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    age = time.time() - t
    if 0.0 <= age < NEGATIVE_CACHE_TTL_S:
        retry_in = int(NEGATIVE_CACHE_TTL_S - age)
        return f"{reason} (cached failure; retrying in {retry_in} s, or delete {marker} to retry now)"
    return None


def _write_failure(marker: Path, reason: str) -> None:
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write_bytes(marker, json.dumps({"time": time.time(), "reason": reason}).encode("utf-8"))
    except OSError:
        pass  # best effort: a read-only cache only costs repeated attempts


class _HttpStatusError(Exception):
    """The server answered with an HTTP error status (message: "HTTP <code> <reason>")."""


def _describe(e: BaseException) -> str:
    if isinstance(e, _HttpStatusError):
        return str(e)
    if isinstance(e, urllib.error.URLError):
        return f"{e.reason}"
    return f"{type(e).__name__}: {e}"


def _atomic_write_bytes(dest: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _download_with_deadline(url: str, dest: Path) -> None:
    """Run :func:`_download` in a worker thread so that even a stalled DNS lookup cannot exceed the budget."""
    outcome: dict[str, BaseException] = {}

    def work() -> None:
        try:
            _download(url, dest, time.monotonic() + DOWNLOAD_TIMEOUT_S)
        except BaseException as e:  # noqa: BLE001 - handed over to the caller thread
            outcome["error"] = e

    worker = threading.Thread(target=work, name="mvsim-asset-download", daemon=True)
    worker.start()
    worker.join(DOWNLOAD_TIMEOUT_S + 0.25)
    if worker.is_alive():
        raise TimeoutError(f"no complete answer within {DOWNLOAD_TIMEOUT_S:g} s")
    if "error" in outcome:
        raise outcome["error"]


def _download(url: str, dest: Path, deadline: float) -> None:
    """Fetch ``url`` into ``dest`` atomically, giving up at ``deadline`` (``time.monotonic()`` seconds)."""
    import urllib.request  # here, not at the top: http.client, ssl and email cost a cold load about 20 ms

    req = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    chunks: list[bytes] = []
    total = 0
    try:
        resp = urllib.request.urlopen(req, timeout=DOWNLOAD_TIMEOUT_S)  # noqa: S310 (http(s) only, checked)
    except urllib.error.HTTPError as e:
        e.close()  # the error object owns the response socket
        raise _HttpStatusError(f"HTTP {e.code} {e.reason}") from None
    with resp:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"transfer took longer than {DOWNLOAD_TIMEOUT_S:g} s")
            sock = getattr(getattr(getattr(resp, "fp", None), "raw", None), "_sock", None)
            if sock is not None:
                sock.settimeout(max(0.05, left))
            chunk = resp.read(64 * 1024)
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_DOWNLOAD_BYTES:
                raise ValueError(f"download larger than {MAX_DOWNLOAD_BYTES} bytes")
            chunks.append(chunk)
    _atomic_write_bytes(dest, b"".join(chunks))


def _safe_member_name(name: str) -> bool:
    """A zip member / inner path is safe if relative, without drive letters, backslash tricks or ``..``."""
    n = name.replace("\\", "/")
    if not n or n.startswith("/") or (len(n) >= 2 and n[1] == ":"):
        return False
    return all(part not in ("..",) for part in n.split("/"))


def _extract_zip(zip_path: Path, out_dir: Path) -> None:
    """Safely extract ``zip_path`` into ``out_dir`` (atomically: temp dir + rename). Rejects unsafe members."""
    with zipfile.ZipFile(zip_path) as zf:
        members = zf.infolist()
        for m in members:
            if not _safe_member_name(m.filename):
                raise ValueError(
                    f"zip member {m.filename!r} has an unsafe path (absolute or with '..'); refusing "
                    "to extract the archive"
                )
        tmp = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=".extract-"))
        try:
            root = tmp.resolve()
            for m in members:
                target = (tmp / PurePosixPath(m.filename.replace("\\", "/"))).resolve()
                if root != target and root not in target.parents:
                    raise ValueError(f"zip member {m.filename!r} would be written outside the extraction folder")
                if m.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(m) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            if out_dir.exists():
                shutil.rmtree(out_dir)
            os.replace(tmp, out_dir)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
