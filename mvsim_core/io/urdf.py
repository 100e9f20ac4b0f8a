"""URDF and xacro files: read a robot description into a small model (links, joints, tree, forward kinematics).

Frames and units follow URDF: lengths in m, angles in rad, a joint's ``origin`` is the child link's frame in the parent
link (``xyz``, then fixed-axis ``rpy``: R = Rz(yaw)·Ry(pitch)·Rx(roll)), its ``axis`` a unit vector in the joint frame.
:meth:`UrdfModel.link_transform` gives a link's 4×4 homogeneous transform in the root link's frame.

``.xacro`` files (and any file whose name ends in ``.xacro``) go through the PyPI ``xacro`` package, with ``k:=v``
arguments. ``package://pkg/path`` URIs resolve against package directories given by the caller, then the ament index
(``ament_index_python``, when installed). This module reads files only: it knows nothing of the simulator.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mvsim_core.errors import WorldFileError

MOVABLE_TYPES = frozenset({"continuous", "revolute", "prismatic", "floating", "planar"})
JOINT_TYPES = MOVABLE_TYPES | {"fixed"}
XACRO_NAMESPACE = "http://www.ros.org/wiki/xacro"
"""A file that declares this namespace needs xacro, whatever its name ends with."""


class UrdfError(WorldFileError):
    """A URDF or xacro file is wrong or cannot be read: ``file:line: what is wrong, how to fix it``."""


@dataclass(frozen=True)
class Origin:
    """A pose (URDF ``<origin>``): ``xyz`` (m) and fixed-axis ``rpy`` (rad)."""

    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def matrix(self) -> np.ndarray:
        """The 4×4 homogeneous transform of this pose."""
        t = np.eye(4)
        t[:3, :3] = rpy_matrix(*self.rpy)
        t[:3, 3] = self.xyz
        return t


@dataclass(frozen=True)
class Geometry:
    """One ``<visual>`` or ``<collision>`` shape in its link's frame.

    Attributes:
        kind: ``box``, ``cylinder``, ``sphere`` or ``mesh``.
        origin: the shape's pose in the link.
        size: box edge lengths (m; box only).
        radius, length: cylinder (m; its axis is the shape's z) or sphere radius.
        filename, scale: mesh URI as written and its scale factors.
        line: source line of the element.
    """

    kind: str
    origin: Origin = Origin()
    size: tuple[float, float, float] = (0.0, 0.0, 0.0)
    radius: float = 0.0
    length: float = 0.0
    filename: str = ""
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    line: int = 0


@dataclass(frozen=True)
class Inertial:
    """A link's ``<inertial>``: mass (kg), centre of mass pose, inertia (ixx, ixy, ixz, iyy, iyz, izz; kg·m²)."""

    mass: float
    origin: Origin = Origin()
    inertia: tuple[float, float, float, float, float, float] = (0.0,) * 6


@dataclass(frozen=True)
class Link:
    """A URDF link: its visuals, collisions and inertial (None when it has none); ``line`` of its element."""

    name: str
    visuals: tuple[Geometry, ...] = ()
    collisions: tuple[Geometry, ...] = ()
    inertial: Inertial | None = None
    line: int = 0


@dataclass(frozen=True)
class Mimic:
    """A URDF ``<mimic>``: position = multiplier · position(joint) + offset."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class UrdfJoint:
    """A URDF joint.

    Attributes:
        name, type, parent, child: as written.
        origin: the child link's frame in the parent link.
        axis: unit axis in the joint frame (default (1, 0, 0) as URDF says).
        lower, upper: position limits (rad or m; ±inf when not given or continuous).
        velocity: |rate| limit (rad/s or m/s; inf when not given); effort: N·m or N (inf when not given).
        mimic: the ``<mimic>``, or None.
        line: source line of the element.
    """

    name: str
    type: str
    parent: str
    child: str
    origin: Origin = Origin()
    axis: tuple[float, float, float] = (1.0, 0.0, 0.0)
    lower: float = -math.inf
    upper: float = math.inf
    velocity: float = math.inf
    effort: float = math.inf
    mimic: Mimic | None = None
    line: int = 0


@dataclass
class UrdfModel:
    """A robot read from a URDF (or xacro) file.

    Attributes:
        name: the ``<robot name>``.
        links: name -> link, in file order.
        joints: every joint in tree order (parents before children, file order among siblings).
        root: the root link (the one that is no joint's child).
        text: the URDF text (after xacro).
        source: the file it was read from ("" for text).
        package_dirs: where ``package://`` URIs were looked up (see :func:`resolve_package_uri`).
    """

    name: str
    links: dict[str, Link]
    joints: list[UrdfJoint]
    root: str
    text: str
    source: str = ""
    package_dirs: tuple[str, ...] = ()
    _by_child: dict[str, UrdfJoint] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_child = {j.child: j for j in self.joints}

    def parent_joint(self, link: str) -> UrdfJoint | None:
        """The joint whose child is ``link`` (None for the root)."""
        return self._by_child.get(link)

    def children(self, link: str) -> list[UrdfJoint]:
        """The joints whose parent is ``link``, in tree order."""
        return [j for j in self.joints if j.parent == link]

    def chain(self, link: str) -> list[UrdfJoint]:
        """The joints from the root down to ``link`` (root first)."""
        out: list[UrdfJoint] = []
        j = self._by_child.get(link)
        while j is not None:
            out.append(j)
            j = self._by_child.get(j.parent)
        return out[::-1]

    def link_transform(self, link: str, positions: Mapping[str, float] | None = None) -> np.ndarray:
        """4×4 transform of ``link``'s frame in the root link's frame, at joint ``positions`` (name -> rad or m;
        missing joints at 0; mimic joints follow their joint).

        Raises:
            KeyError: no such link.
        """
        if link not in self.links:
            raise KeyError(f"no link {link!r}; links: {', '.join(self.links)}")
        q = dict(positions or {})
        t = np.eye(4)
        for j in self.chain(link):
            t = t @ j.origin.matrix() @ joint_motion(j, self.position(j, q))
        return t

    def joint_frame(self, joint: UrdfJoint) -> np.ndarray:
        """4×4 transform of ``joint``'s frame (its origin in the parent link) in the root frame, at zero positions."""
        return self.link_transform(joint.parent) @ joint.origin.matrix()

    def axis_in_root(self, joint: UrdfJoint) -> np.ndarray:
        """``joint``'s axis as a unit vector in the root frame (zero positions)."""
        a = self.joint_frame(joint)[:3, :3] @ np.asarray(joint.axis, dtype=float)
        n = float(np.linalg.norm(a))
        return a / n if n > 0 else a

    def position(self, joint: UrdfJoint, positions: Mapping[str, float]) -> float:
        """``joint``'s position from ``positions``, following ``<mimic>`` chains (0 when not given)."""
        seen: set[str] = set()
        j = joint
        mult, off = 1.0, 0.0
        while j.mimic is not None and j.name not in positions and j.name not in seen:
            seen.add(j.name)
            mult, off = mult * j.mimic.multiplier, off + mult * j.mimic.offset
            nxt = next((k for k in self.joints if k.name == j.mimic.joint), None)
            if nxt is None:
                break
            j = nxt
        return mult * float(positions.get(j.name, 0.0)) + off


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """3×3 rotation of URDF fixed-axis roll, pitch, yaw (rad): Rz(yaw)·Ry(pitch)·Rx(roll)."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw),
                              math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def matrix_rpy(r: np.ndarray) -> tuple[float, float, float]:
    """(roll, pitch, yaw) in rad of a 3×3 rotation (inverse of :func:`rpy_matrix`)."""
    pitch = math.asin(max(-1.0, min(1.0, -float(r[2, 0]))))
    if abs(math.cos(pitch)) > 1e-9:
        roll = math.atan2(float(r[2, 1]), float(r[2, 2]))
        yaw = math.atan2(float(r[1, 0]), float(r[0, 0]))
    else:  # gimbal lock: put it all in yaw
        roll = 0.0
        yaw = math.atan2(-float(r[0, 1]), float(r[1, 1]))
    return roll, pitch, yaw


def joint_motion(joint: UrdfJoint, q: float) -> np.ndarray:
    """4×4 motion of ``joint`` at position ``q`` (rad about, or m along, its axis; identity for other types)."""
    t = np.eye(4)
    if q == 0.0 or joint.type not in ("continuous", "revolute", "prismatic"):
        return t
    a = np.asarray(joint.axis, dtype=float)
    a = a / (np.linalg.norm(a) or 1.0)
    if joint.type == "prismatic":
        t[:3, 3] = a * q
        return t
    k = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    t[:3, :3] = np.eye(3) + math.sin(q) * k + (1.0 - math.cos(q)) * (k @ k)
    return t


# ---------------------------------------------------------------------------------------------------- reading
def read_urdf(path: str | os.PathLike[str], *, xacro_args: Mapping[str, str] | None = None,
              package_dirs: Sequence[str | os.PathLike[str]] = ()) -> UrdfModel:
    """Read a ``.urdf`` file, or a ``.xacro`` file (or any file that declares the xacro namespace, or when
    ``xacro_args`` are given) through xacro with ``xacro_args`` (name -> value).

    Raises:
        UrdfError: the file is missing, is not XML, has no ``<robot>``, or its tree is wrong (see
            :func:`parse_urdf`); a xacro problem, with xacro's message.
    """
    p = Path(path)
    shown = str(path)
    if not p.is_file():
        raise UrdfError(shown, 0, "no such file; give the path of a .urdf or .xacro file")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UrdfError(shown, 0, f"cannot read it ({e}); give a readable UTF-8 URDF file") from None
    if p.name.endswith(".xacro") or xacro_args or XACRO_NAMESPACE in text:
        text = expand_xacro(p, xacro_args or {}, package_dirs)
    return parse_urdf(text, source=shown, package_dirs=package_dirs)


def expand_xacro(path: Path, args: Mapping[str, str], package_dirs: Sequence[str | os.PathLike[str]] = ()) -> str:
    """The URDF text of xacro file ``path`` with arguments ``args``. ``$(find pkg)`` finds the packages in
    ``package_dirs`` (:func:`package_folders`) first, then those of the ament index (``AMENT_PREFIX_PATH``).

    Raises:
        UrdfError: xacro is not installed, or it fails (its message).
    """
    try:
        import xacro
    except ImportError:
        raise UrdfError(str(path), 0, "reading .xacro needs the xacro package; pip install xacro") from None
    import tempfile

    with tempfile.TemporaryDirectory(prefix="mvsim-ament-") as prefix:
        saved = os.environ.get("AMENT_PREFIX_PATH")
        folders = package_folders(package_dirs)
        if folders:  # xacro's $(find) asks ament_index_python, which reads AMENT_PREFIX_PATH at each call
            _ament_prefix(Path(prefix), folders)
            os.environ["AMENT_PREFIX_PATH"] = os.pathsep.join([prefix, *([saved] if saved else [])])
        try:
            doc = xacro.process_file(str(path), mappings=dict(args))
            return str(doc.toprettyxml(indent="  "))
        except Exception as e:  # xacro raises many kinds (XacroException, ParseError, KeyError from $(find))
            msg = " ".join(str(e).split()) or type(e).__name__
            if "PackageNotFound" in type(e).__name__ or "package '" in msg:
                pkg = msg.split("package '", 1)[1].split("'", 1)[0] if "package '" in msg else "?"
                raise UrdfError(str(path), 0, f"xacro failed: $(find {pkg}): package '{pkg}' not found; add the "
                                              f"folder that holds '{pkg}/' with --package-path (package_path=), or "
                                              f"put the package on AMENT_PREFIX_PATH") from None
            if "AMENT_PREFIX_PATH" in msg:
                raise UrdfError(str(path), 0, "xacro failed: $(find ...) needs an ament index and AMENT_PREFIX_PATH "
                                              "is not set; add the folder that holds the packages with "
                                              "--package-path (package_path=), or source a ROS 2 setup") from None
            raise UrdfError(str(path), 0, f"xacro failed: {msg}; fix the xacro file or its arguments") from None
        finally:
            if folders:
                if saved is None:
                    os.environ.pop("AMENT_PREFIX_PATH", None)
                else:
                    os.environ["AMENT_PREFIX_PATH"] = saved


def package_folders(package_dirs: Sequence[str | os.PathLike[str]]) -> dict[str, Path]:
    """Package name -> folder, for the folders ``package_dirs`` name: a folder with a ``package.xml`` is the package
    that file names (else the folder's name); any other folder holds packages, each sub-folder one (named by its
    ``package.xml``, else by the sub-folder). The first folder found for a name wins."""
    found: dict[str, Path] = {}

    def add(folder: Path) -> None:
        found.setdefault(_package_name(folder), folder)

    for d in package_dirs:
        base = Path(d)
        if not base.is_dir():
            continue
        if (base / "package.xml").is_file():
            add(base)
            continue
        for sub in sorted(base.iterdir()):
            if sub.is_dir():
                add(sub)
    return found


def _package_name(folder: Path) -> str:
    """The ``<name>`` in ``folder/package.xml``, else the folder's name."""
    manifest = folder / "package.xml"
    if manifest.is_file():
        try:
            from lxml import etree

            name = etree.parse(str(manifest)).findtext("name")
            if name and name.strip():
                return name.strip()
        except (OSError, etree.XMLSyntaxError):
            pass
    return folder.name


def _ament_prefix(prefix: Path, folders: Mapping[str, Path]) -> None:
    """Make ``prefix`` an ament prefix whose packages are ``folders`` (their share folders link to them)."""
    share = prefix / "share"
    index = share / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    for name, folder in folders.items():
        (share / name).symlink_to(folder.resolve(), target_is_directory=True)
        (index / name).write_text("")


def _floats(text: str | None, n: int, default: tuple[float, ...], source: str, line: int, what: str
            ) -> tuple[float, ...]:
    if text is None:
        return default
    parts = text.split()
    try:
        vals = tuple(float(v) for v in parts)
    except ValueError:
        vals = ()
    if len(vals) != n or not all(math.isfinite(v) for v in vals):
        raise UrdfError(source, line, f"{what}={text!r} is not {n} finite numbers; write e.g. "
                                      f"{' '.join(['0'] * n)!r}")
    return vals


def _float(text: str | None, default: float, source: str, line: int, what: str) -> float:
    if text is None:
        return default
    return _floats(text, 1, (default,), source, line, what)[0]


def _origin(el: object, source: str) -> Origin:
    o = el.find("origin")  # type: ignore[attr-defined]
    if o is None:
        return Origin()
    line = o.sourceline or 0
    xyz = _floats(o.get("xyz"), 3, (0.0, 0.0, 0.0), source, line, "<origin xyz")
    rpy = _floats(o.get("rpy"), 3, (0.0, 0.0, 0.0), source, line, "<origin rpy")
    return Origin(xyz, rpy)  # type: ignore[arg-type]


def _geometry(el: object, source: str) -> Geometry | None:
    g = el.find("geometry")  # type: ignore[attr-defined]
    line = el.sourceline or 0  # type: ignore[attr-defined]
    if g is None or len(g) == 0:
        return None
    shape = next((c for c in g if isinstance(c.tag, str)), None)
    if shape is None:
        return None
    origin = _origin(el, source)
    sl = shape.sourceline or line
    kind = shape.tag
    if kind == "box":
        size = _floats(shape.get("size"), 3, (0.0, 0.0, 0.0), source, sl, "<box size")
        return Geometry("box", origin, size=size, line=sl)  # type: ignore[arg-type]
    if kind == "cylinder":
        return Geometry("cylinder", origin, radius=_float(shape.get("radius"), 0.0, source, sl, "<cylinder radius"),
                        length=_float(shape.get("length"), 0.0, source, sl, "<cylinder length"), line=sl)
    if kind == "sphere":
        return Geometry("sphere", origin, radius=_float(shape.get("radius"), 0.0, source, sl, "<sphere radius"),
                        line=sl)
    if kind == "mesh":
        scale = _floats(shape.get("scale"), 3, (1.0, 1.0, 1.0), source, sl, "<mesh scale")
        return Geometry("mesh", origin, filename=shape.get("filename", ""), scale=scale, line=sl)  # type: ignore
    return None  # <capsule> and others: not read


def parse_urdf(text: str, *, source: str = "<text>",
               package_dirs: Sequence[str | os.PathLike[str]] = ()) -> UrdfModel:
    """Parse URDF ``text`` (``source`` names it in messages).

    Raises:
        UrdfError: not XML; no ``<robot>`` root; a link or joint without a name, or named twice; a joint of an
            unknown type or naming an unknown link; a link with two parents; a cycle; several roots.
    """
    from lxml import etree

    try:
        root_el = etree.fromstring(text.encode("utf-8"), etree.XMLParser(remove_comments=True, huge_tree=False))
    except etree.XMLSyntaxError as e:
        line = e.lineno or 1
        raise UrdfError(source, line, f"not XML: {e.msg}; fix the XML syntax") from None
    if root_el.tag != "robot":
        raise UrdfError(source, root_el.sourceline or 1, f"root element is <{root_el.tag}>; a URDF file holds one "
                                                         "<robot name=\"...\"> element")
    links: dict[str, Link] = {}
    for el in root_el.findall("link"):
        line = el.sourceline or 0
        name = el.get("name")
        if not name:
            raise UrdfError(source, line, "<link> without a name; give it name=\"...\"")
        if name in links:
            raise UrdfError(source, line, f"link '{name}' defined twice (first at line {links[name].line}); "
                                          "rename one")
        visuals = tuple(g for v in el.findall("visual") if (g := _geometry(v, source)) is not None)
        collisions = tuple(g for c in el.findall("collision") if (g := _geometry(c, source)) is not None)
        inertial = None
        ie = el.find("inertial")
        if ie is not None:
            me = ie.find("mass")
            mass = _float(me.get("value") if me is not None else None, 0.0, source, ie.sourceline or line,
                          "<mass value")
            ine = ie.find("inertia")
            inertia: tuple[float, ...] = (0.0,) * 6
            if ine is not None:
                inertia = tuple(_float(ine.get(k), 0.0, source, ine.sourceline or line, f"<inertia {k}")
                                for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
            inertial = Inertial(mass, _origin(ie, source), inertia)  # type: ignore[arg-type]
        links[name] = Link(name, visuals, collisions, inertial, line)
    if not links:
        raise UrdfError(source, root_el.sourceline or 1, "the <robot> has no <link>; a robot needs at least one")

    joints: list[UrdfJoint] = []
    by_child: dict[str, UrdfJoint] = {}
    names: dict[str, int] = {}
    for el in root_el.findall("joint"):
        line = el.sourceline or 0
        name = el.get("name")
        if not name:
            raise UrdfError(source, line, "<joint> without a name; give it name=\"...\"")
        if name in names:
            raise UrdfError(source, line, f"joint '{name}' defined twice (first at line {names[name]}); rename one")
        names[name] = line
        jtype = el.get("type", "")
        if jtype not in JOINT_TYPES:
            raise UrdfError(source, line, f"joint '{name}' has type {jtype!r}; use one of "
                                          f"{', '.join(sorted(JOINT_TYPES))}")
        ends = []
        for tag in ("parent", "child"):
            end = el.find(tag)
            link = end.get("link") if end is not None else None
            if not link:
                raise UrdfError(source, line, f"joint '{name}' has no <{tag} link=\"...\">; add it")
            if link not in links:
                raise UrdfError(source, (end.sourceline if end is not None else None) or line,
                                f"joint '{name}' names unknown {tag} link '{link}'; define <link name=\"{link}\"> or "
                                f"fix the name (links: {', '.join(links)})")
            ends.append(link)
        parent, child = ends
        if child in by_child:
            raise UrdfError(source, line, f"link '{child}' has two parents: joints '{by_child[child].name}' (line "
                                          f"{by_child[child].line}) and '{name}'; a URDF is a tree, remove one")
        ax = el.find("axis")
        axis = _floats(ax.get("xyz") if ax is not None else None, 3, (1.0, 0.0, 0.0), source,
                       (ax.sourceline if ax is not None else None) or line, "<axis xyz")
        if jtype in ("continuous", "revolute", "prismatic") and not any(axis):
            raise UrdfError(source, line, f"joint '{name}' has a zero <axis>; give a direction, e.g. xyz=\"0 1 0\"")
        lower, upper, velocity, effort = -math.inf, math.inf, math.inf, math.inf
        lim = el.find("limit")
        if lim is not None:
            ll = lim.sourceline or line
            velocity = _float(lim.get("velocity"), math.inf, source, ll, "<limit velocity")
            effort = _float(lim.get("effort"), math.inf, source, ll, "<limit effort")
            if jtype != "continuous":
                lower = _float(lim.get("lower"), 0.0, source, ll, "<limit lower")
                upper = _float(lim.get("upper"), 0.0, source, ll, "<limit upper")
        mimic = None
        mi = el.find("mimic")
        if mi is not None:
            ml = mi.sourceline or line
            if not mi.get("joint"):
                raise UrdfError(source, ml, f"<mimic> of joint '{name}' has no joint=\"...\"; name the followed joint")
            mimic = Mimic(mi.get("joint", ""), _float(mi.get("multiplier"), 1.0, source, ml, "<mimic multiplier"),
                          _float(mi.get("offset"), 0.0, source, ml, "<mimic offset"))
        j = UrdfJoint(name, jtype, parent, child, _origin(el, source), axis, lower, upper,  # type: ignore[arg-type]
                      velocity, effort, mimic, line)
        by_child[child] = j
        joints.append(j)
    for j in joints:
        if j.mimic is not None and j.mimic.joint not in names:
            raise UrdfError(source, j.line, f"joint '{j.name}' mimics unknown joint '{j.mimic.joint}'; fix the name")

    roots = [n for n in links if n not in by_child]
    if not roots:  # every link has a parent: there is a cycle
        raise UrdfError(source, joints[0].line, _cycle_message(by_child, next(iter(links))))
    # tree order: walk from each root; links not reached are on a cycle
    ordered: list[UrdfJoint] = []
    by_parent: dict[str, list[UrdfJoint]] = {}
    for j in joints:
        by_parent.setdefault(j.parent, []).append(j)
    reached = set()
    stack = [roots[0]]
    while stack:
        link = stack.pop()
        reached.add(link)
        kids = by_parent.get(link, [])
        ordered.extend(kids)
        stack.extend(k.child for k in reversed(kids))
    unreached = [n for n in links if n not in reached]
    on_cycle = [n for n in unreached if n in by_child]
    cyc = None
    for n in on_cycle:
        cyc = _cycle_from(by_child, n)
        if cyc:
            break
    if cyc:
        first = by_child[cyc[0]]
        raise UrdfError(source, first.line, _cycle_message(by_child, cyc[0]))
    if len(roots) > 1:
        raise UrdfError(source, links[roots[1]].line,
                        f"several root links ({', '.join(roots)}): a URDF tree has one root; connect "
                        f"'{roots[1]}' to the tree with a joint")
    # keep tree order but file order among siblings: a BFS-free stable order is what we built (depth first)
    dirs = tuple(str(d) for d in package_dirs)
    return UrdfModel(root_el.get("name", ""), links, ordered, roots[0], text, source, dirs)


def _cycle_from(by_child: Mapping[str, UrdfJoint], start: str) -> list[str]:
    """The links of the cycle reached by walking parents up from ``start`` ([] when it ends at a root)."""
    path: list[str] = []
    seen: dict[str, int] = {}
    link = start
    while link in by_child and link not in seen:
        seen[link] = len(path)
        path.append(link)
        link = by_child[link].parent
    if link in seen:
        return path[seen[link]:]
    return []


def _cycle_message(by_child: Mapping[str, UrdfJoint], start: str) -> str:
    cyc = _cycle_from(by_child, start) or [start]
    names = " -> ".join([*(by_child[n].name for n in cyc if n in by_child)])
    return (f"the joints form a cycle ({names}): a URDF is a tree with one root link; remove a joint of the "
            "cycle")


# ---------------------------------------------------------------------------------------------------- package://
def resolve_package_uri(uri: str, package_dirs: Sequence[str | os.PathLike[str]], *, source: str = "",
                        line: int = 0) -> Path | None:
    """The local file of a mesh URI: ``package://pkg/rel`` looked up as ``DIR/pkg/rel`` (or ``DIR/rel`` when DIR
    itself is named ``pkg``) for each of ``package_dirs``, then in pkg's ament share directory; ``file://`` and
    plain paths as they are (relative ones against ``source``'s folder). None when the file does not exist.

    Raises:
        UrdfError: ``package_dirs`` were given and none of them, nor the ament index, has the package.
    """
    if uri.startswith("package://"):
        rest = uri[len("package://"):]
        pkg, _, rel = rest.partition("/")
        for d in package_dirs:
            base = Path(d)
            for cand in (base / pkg, base if base.name == pkg else None):
                if cand is not None and cand.is_dir():
                    f = cand / rel
                    return f if f.is_file() else None
        share = _ament_share(pkg)
        if share is not None:
            f = Path(share) / rel
            return f if f.is_file() else None
        if package_dirs:
            raise UrdfError(source, line, f"unknown package '{pkg}' in {uri!r}: not in the package paths "
                                          f"({', '.join(str(d) for d in package_dirs)}) nor the ament index; add "
                                          f"the folder that holds '{pkg}/' with --package-path (package_path=)")
        return None
    if uri.startswith("file://"):
        f = Path(uri[len("file://"):])
    else:
        f = Path(uri)
    if not f.is_absolute() and source:
        f = Path(source).parent / f
    return f if f.is_file() else None


def _ament_share(pkg: str) -> str | None:
    try:
        from ament_index_python.packages import get_package_share_directory
    except ImportError:
        return None
    try:
        return str(get_package_share_directory(pkg))
    except Exception:  # PackageNotFoundError, ValueError for bad names
        return None
