"""A URDF robot as an MVSim vehicle: the ``<vehicle:class>`` it implies and its :class:`RobotDescription`.

Frames: the vehicle frame is the URDF root link's frame moved down to the ground (its origin is ``height`` m below
the root link's, x forward, y left, z up); wheel positions, the chassis outline and sensor poses are in that frame
(m, rad). The ground is where the wheels touch: ``height`` = wheel radius − mean wheel-centre z in the root frame.

Rules (see the README section "URDF robots"):

- a wheel is a ``continuous``/``revolute`` joint about a roughly lateral axis (root frame) whose child link has a
  cylinder ``<collision>``; its spin joint drives it. A steering joint is a ``revolute`` joint about a roughly
  vertical axis whose child is such a wheel link (the wheel has no spin joint then) or carries one.
- a lateral joint on the centre line whose child has no collision is a virtual traction wheel (its position is the
  driven wheels' mean spin); a vertical one is the virtual steering wheel (the equivalent centre steering angle).
- left/right come from the wheels' y in the root frame, never from their names.
- 2 driven wheels: ``differential``; 4 driven, none steered: ``differential_4_wheels``; steered wheels:
  ``ackermann_drivetrain`` (its drivetrain drives the axles that have spin joints).
- chassis: the outline (convex hull) of the non-wheel links' collision shapes (boxes, cylinders, spheres, meshes
  that load) on the ground, their z range, the sum of their ``<inertial>`` masses.
"""

from __future__ import annotations

import math
import os
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from mvsim_core.errors import AssetError
from mvsim_core.io.meshes import convex_hull_2d, load_mesh
from mvsim_core.io.urdf import Geometry, UrdfError, UrdfJoint, UrdfModel, matrix_rpy, read_urdf, resolve_package_uri
from mvsim_core.objects.vehicles.description import Joint, JointSource, RobotDescription
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.parser import parse_text

LATERAL = 0.9
"""|axis · y| (root frame) above which a joint turns about the lateral axis (a wheel's spin); |axis · z| above which
it turns about the vertical (steering)."""
CENTRE_LINE = 0.02
"""m: |y| under which a collision-less wheel joint counts as a virtual wheel on the centre line."""
RADIUS_TOLERANCE = 1e-3
"""m: driven wheels whose radii differ by more cannot share one drive."""
DEFAULT_WHEEL_MASS = 0.2
"""kg: the mass of a wheel whose link has no ``<inertial>``."""
CHASSIS_AREAL_DENSITY = 100.0
"""kg/m²: the chassis mass per footprint area when no non-wheel link has an ``<inertial>`` mass."""
MIN_CHASSIS_ZMIN = 0.005
"""m: the lowest the chassis prism may start above the ground."""
GAIN_PER_KG_M = 5.36
"""Twist PID KP (N·m·s/m) per kg of vehicle per m of wheel radius: warehouse_bot's 15 for 28 kg on 0.1 m wheels,
which reaches 90 % of a step in speed in about 0.2 s; KI equals KP, max_torque is 0.8·KP (N·m)."""
DAMPING_PER_KG_M2 = 0.18
"""Axle viscous friction C_damping (N·m·s/rad) per kg of vehicle per m² of wheel radius: warehouse_bot's 0.05 for 28 kg
on 0.1 m wheels (the resisting force C_damping·v/r² then slows every vehicle alike)."""


@dataclass(frozen=True)
class UrdfWheel:
    """A simulated wheel found in the URDF.

    Attributes:
        link: the wheel link; spin: its spin joint ("" when it has none: it rolls freely); steer: its steering
            joint ("" when none).
        x, y: its centre in the vehicle frame (m); z: centre height in the root frame (m).
        radius, width: of its cylinder collision (m); mass: kg.
        spin_sign: +1 when a positive spin-joint rate rolls the vehicle forward, −1 when backward (axis to the right).
    """

    link: str
    spin: str
    steer: str
    x: float
    y: float
    z: float
    radius: float
    width: float
    mass: float
    spin_sign: float = 1.0


@dataclass(frozen=True)
class UrdfVehicle:
    """The vehicle a URDF implies: the class XML text, the description and the figures the summary reports."""

    class_xml: str
    description: RobotDescription
    dynamics: str
    wheels: tuple[UrdfWheel, ...]
    radius: float
    track: float
    wheelbase: float

    def summary(self, class_name: str) -> str:
        """One line: class, dynamics, wheels, radius, track (and wheelbase)."""
        wb = f", wheelbase {self.wheelbase:.4g} m" if self.wheelbase else ""
        return (f"class '{class_name}': {self.dynamics}, {len(self.wheels)} wheels, radius {self.radius:.4g} m, "
                f"track {self.track:.4g} m{wb}")


def _err(model: UrdfModel, line: int, message: str) -> UrdfError:
    return UrdfError(model.source or "<urdf>", line, message)


def _cylinder(model: UrdfModel, link: str) -> Geometry | None:
    return next((g for g in model.links[link].collisions if g.kind == "cylinder"), None)


def _descendant_wheel(model: UrdfModel, link: str) -> UrdfJoint | None:
    """A lateral spin joint below ``link`` whose child has a cylinder collision."""
    for j in model.children(link):
        if j.type in ("continuous", "revolute") and abs(model.axis_in_root(j)[1]) > LATERAL \
                and _cylinder(model, j.child) is not None:
            return j
    return None


def _mass(model: UrdfModel, link: str, default: float) -> float:
    ine = model.links[link].inertial
    return ine.mass if ine is not None and ine.mass > 0 else default


def analyse(model: UrdfModel, class_name: str) -> UrdfVehicle:
    """The vehicle ``model`` implies (see the module docstring for the rules).

    Raises:
        UrdfError: no wheels; a wheel link without a collision; driven wheels of different radii; a layout no
            dynamics class simulates.
    """
    spin_joints: dict[str, UrdfJoint] = {}  # wheel link -> spin joint
    steer_joints: dict[str, UrdfJoint] = {}  # wheel link -> steering joint
    virtual_spin: list[UrdfJoint] = []
    virtual_steer: list[UrdfJoint] = []
    for j in model.joints:
        if j.type not in ("continuous", "revolute"):
            continue
        axis = model.axis_in_root(j)
        cyl = _cylinder(model, j.child)
        pos = model.joint_frame(j)[:3, 3]
        if abs(axis[1]) > LATERAL:
            if cyl is not None:
                spin_joints[j.child] = j
            elif not model.links[j.child].collisions and abs(pos[1]) < CENTRE_LINE:
                virtual_spin.append(j)
            elif not model.links[j.child].collisions and any(v.kind == "cylinder"
                                                             for v in model.links[j.child].visuals):
                raise _err(model, model.links[j.child].line,
                           f"wheel link '{j.child}' (joint '{j.name}') has no <collision>; give it a cylinder "
                           "collision (radius, length) so that it can roll on the ground")
        elif abs(axis[2]) > LATERAL:
            if cyl is not None:
                steer_joints[j.child] = j
            else:
                below = _descendant_wheel(model, j.child)
                if below is not None:
                    steer_joints[below.child] = j
                elif not model.links[j.child].collisions and abs(pos[1]) < CENTRE_LINE:
                    virtual_steer.append(j)
    wheel_links = list(dict.fromkeys([*spin_joints, *steer_joints]))
    if not wheel_links:
        lateral = [j.name for j in model.joints if j.type in ("continuous", "revolute")]
        hint = (f" (its moving joints {', '.join(lateral)} carry no link with a cylinder collision)" if lateral
                else "")
        raise _err(model, model.links[model.root].line,
                   f"robot '{model.name}' has no wheels{hint}: a wheel is a continuous joint about the lateral "
                   "axis whose child link has a cylinder <collision>; add one per wheel")
    raw: list[tuple[str, np.ndarray, Geometry]] = []
    for link in wheel_links:
        cyl = _cylinder(model, link)
        if cyl is None:
            raise _err(model, model.links[link].line, f"wheel link '{link}' has no cylinder <collision>; add one")
        raw.append((link, model.link_transform(link)[:3, 3], cyl))
    radius_all = [c.radius for _, _, c in raw]
    height = float(np.mean([r - p[2] for (_, p, _), r in zip(raw, radius_all, strict=True)]))
    wheels = []
    for link, p, cyl in raw:
        sj = spin_joints.get(link)
        sign = 1.0
        if sj is not None:
            sign = 1.0 if model.axis_in_root(sj)[1] > 0 else -1.0
        wheels.append(UrdfWheel(link, sj.name if sj else "", steer_joints[link].name if link in steer_joints else "",
                                float(p[0]), float(p[1]), float(p[2]), cyl.radius, cyl.length,
                                _mass(model, link, DEFAULT_WHEEL_MASS), sign))
    driven = [w for w in wheels if w.spin]
    steered = [w for w in wheels if w.steer]
    if not driven:
        raise _err(model, model.links[model.root].line,
                   f"robot '{model.name}' has no driven wheel (no continuous joint turns a wheel about the lateral "
                   "axis); give the wheels spin joints")
    radii = sorted({round(w.radius, 6) for w in driven})
    if radii[-1] - radii[0] > RADIUS_TOLERANCE:
        w0 = next(w for w in driven if round(w.radius, 6) == radii[-1])
        raise _err(model, model.links[w0.link].line,
                   f"driven wheels of different radii ({', '.join(f'{r:g}' for r in radii)} m): the simulated drive "
                   "needs one radius; make the wheel cylinders equal")
    left = sorted((w for w in wheels if w.y > 0), key=lambda w: w.x)
    right = sorted((w for w in wheels if w.y < 0), key=lambda w: w.x)
    order: list[UrdfWheel]
    if steered:
        if len(wheels) != 4 or len(left) != 2 or len(right) != 2:
            raise _err(model, model.links[model.root].line,
                       f"robot '{model.name}' steers but has {len(wheels)} wheels ({len(left)} left, {len(right)} "
                       "right); a steered vehicle needs 2 rear and 2 front wheels")
        rl, fl = left
        rr, fr = right
        if not (fl.steer and fr.steer) or rl.steer or rr.steer:
            raise _err(model, model.links[model.root].line,
                       f"robot '{model.name}': only front-axle steering is simulated; the steering joints turn "
                       f"{', '.join(w.link for w in steered)}")
        dynamics = "ackermann_drivetrain"
        order = [rl, rr, fl, fr]
    elif len(driven) == 2 and len(wheels) == 2:
        if len(left) != 1 or len(right) != 1:
            raise _err(model, model.links[model.root].line,
                       f"robot '{model.name}': its two wheels are not one left and one right (y = "
                       f"{wheels[0].y:g}, {wheels[1].y:g} m); a differential drive needs one on each side")
        dynamics = "differential"
        order = [left[0], right[0]]
    elif len(driven) == 4 and len(wheels) == 4 and len(left) == 2 and len(right) == 2:
        dynamics = "differential_4_wheels"
        order = [left[0], right[0], left[1], right[1]]  # lr, rr, lf, rf
    else:
        raise _err(model, model.links[model.root].line,
                   f"robot '{model.name}' has {len(driven)} driven wheels ({len(left)} left, {len(right)} right) "
                   "and no steering: simulated are 2 (differential) or 4 (skid-steer); remove the extra wheel "
                   "joints or make them fixed casters")
    track = max(w.y for w in wheels) - min(w.y for w in wheels)
    wheelbase = max(w.x for w in wheels) - min(w.x for w in wheels) if len(wheels) > 2 else 0.0
    radius = driven[0].radius
    xml = _class_xml(model, class_name, dynamics, order, height, virtual_steer)
    desc = _description(model, height, order, virtual_spin, virtual_steer)
    return UrdfVehicle(xml, desc, dynamics, tuple(order), radius, track, wheelbase)


# ---------------------------------------------------------------------------------------------------- chassis
def _shape_points(g: Geometry, model: UrdfModel) -> np.ndarray | None:
    """Points (N×3, shape frame, m) bounding a collision shape; None for a mesh that does not load."""
    if g.kind == "box":
        hx, hy, hz = (0.5 * s for s in g.size)
        return np.array([[sx * hx, sy * hy, sz * hz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    a = np.linspace(0.0, 2 * math.pi, 16, endpoint=False)
    if g.kind == "cylinder":
        ring = np.stack([g.radius * np.cos(a), g.radius * np.sin(a)], axis=1)
        return np.vstack([np.column_stack([ring, np.full(16, z)]) for z in (-0.5 * g.length, 0.5 * g.length)])
    if g.kind == "sphere":
        r = g.radius
        ring = np.column_stack([r * np.cos(a), r * np.sin(a), np.zeros(16)])
        return np.vstack([ring, [[0, 0, r], [0, 0, -r]]])
    if g.kind == "mesh":
        try:
            path = resolve_package_uri(g.filename, model.package_dirs, source=model.source, line=g.line)
        except UrdfError:
            return None
        if path is None:
            return None
        try:
            mesh = load_mesh(path)
        except AssetError:
            return None
        v = np.asarray(mesh.vertices, dtype=float)
        return v * np.asarray(g.scale) if len(v) else None
    return None


def _chassis(model: UrdfModel, wheel_links: set[str], height: float
             ) -> tuple[np.ndarray | None, float, float, float]:
    """(outline P×2 or None, zmin, zmax, mass) of the non-wheel links (vehicle frame, m, kg)."""
    pts: list[np.ndarray] = []
    mass = 0.0
    for name, link in model.links.items():
        if name in wheel_links:
            continue
        if link.inertial is not None:
            mass += max(0.0, link.inertial.mass)
        t = model.link_transform(name)
        for g in link.collisions:
            p = _shape_points(g, model)
            if p is None:
                continue
            tt = t @ g.origin.matrix()
            pts.append(p @ tt[:3, :3].T + tt[:3, 3])
    if not pts:
        return None, 0.0, 0.0, mass
    allp = np.vstack(pts)
    allp[:, 2] += height
    hull = convex_hull_2d(allp[:, :2])
    zmin = max(MIN_CHASSIS_ZMIN, float(allp[:, 2].min()))
    zmax = max(zmin + 0.01, float(allp[:, 2].max()))
    return hull, zmin, zmax, mass


def _deg(a: float) -> str:
    return f"{math.degrees(a):.6g}"


def _visuals(model: UrdfModel, wheel_links: set[str], height: float) -> list[str]:
    """``<visual>`` entries of the URDF's mesh visuals (non-wheel links; the simulator draws its own wheels)."""
    out = []
    for name, link in model.links.items():
        if name in wheel_links:
            continue
        for g in link.visuals:
            if g.kind != "mesh" or not g.filename:
                continue
            path = resolve_package_uri(g.filename, model.package_dirs, source=model.source, line=g.line)
            uri = str(path) if path is not None else g.filename
            t = model.link_transform(name) @ g.origin.matrix()
            roll, pitch, yaw = matrix_rpy(t[:3, :3])
            x, y, z = t[:3, 3]
            out.append(f"    <visual name={quoteattr(name)}><model_uri>{escape(uri)}</model_uri>"
                       f"<model_scale>{g.scale[0]:.6g}</model_scale>"
                       f"<model_offset_x>{x:.6g}</model_offset_x><model_offset_y>{y:.6g}</model_offset_y>"
                       f"<model_offset_z>{z + height:.6g}</model_offset_z><model_yaw>{_deg(yaw)}</model_yaw>"
                       f"<model_pitch>{_deg(pitch)}</model_pitch><model_roll>{_deg(roll)}</model_roll></visual>")
    return out


def _class_xml(model: UrdfModel, class_name: str, dynamics: str, order: Sequence[UrdfWheel], height: float,
               virtual_steer: Sequence[UrdfJoint]) -> str:
    links = {w.link for w in order}
    outline, zmin, zmax, mass = _chassis(model, links, height)
    if outline is None:  # no geometry: the wheels' outline
        xs = [w.x for w in order]
        ys = [w.y for w in order]
        r = max(w.radius for w in order)
        outline = np.array([[min(xs) - r, min(ys)], [max(xs) + r, min(ys)], [max(xs) + r, max(ys)],
                            [min(xs) - r, max(ys)]])
        zmin, zmax = r, 2 * r
    area = 0.5 * abs(float(np.dot(outline[:, 0], np.roll(outline[:, 1], 1))
                           - np.dot(outline[:, 1], np.roll(outline[:, 0], 1))))
    if mass <= 0:
        mass = max(1.0, CHASSIS_AREAL_DENSITY * area)
    total = mass + sum(w.mass for w in order)
    radius = max(w.radius for w in order if w.spin)
    lines = [f"<vehicle:class name={quoteattr(class_name)}>",
             f"  <!-- generated by mvsim import-urdf from {escape(Path(model.source).name or 'URDF text')}: robot "
             f"'{escape(model.name)}', root link '{escape(model.root)}' {height:.4g} m above the ground -->",
             f"  <dynamics class=\"{dynamics}\">"]
    slots = {"differential": ("l_wheel", "r_wheel"),
             "differential_4_wheels": ("lr_wheel", "rr_wheel", "lf_wheel", "rf_wheel"),
             "ackermann_drivetrain": ("rl_wheel", "rr_wheel", "fl_wheel", "fr_wheel")}[dynamics]
    for slot, w in zip(slots, order, strict=True):
        lines.append(f"    <{slot} pos=\"{w.x:.6g} {w.y:.6g}\" mass=\"{w.mass:.6g}\" width=\"{w.width:.6g}\" "
                     f"diameter=\"{2 * w.radius:.6g}\"/>")
    if dynamics == "ackermann_drivetrain":
        fl, fr = order[2], order[3]
        steer_js = [model_joint(model, w.steer) for w in (fl, fr)] + list(virtual_steer)
        limits = [min(abs(j.lower), abs(j.upper)) for j in steer_js if math.isfinite(j.lower)]
        max_steer = min(limits) if limits else math.radians(30.0)
        lines += [f"    <f_wheels_x>{0.5 * (fl.x + fr.x):.6g}</f_wheels_x>",
                  f"    <f_wheels_d>{abs(fl.y - fr.y):.6g}</f_wheels_d>",
                  f"    <max_steer_ang_deg>{_deg(max_steer)}</max_steer_ang_deg>"]
        front = bool(fl.spin or fr.spin)
        rear = bool(order[0].spin or order[1].spin)
        dtype = "open_4wd" if front and rear else "open_front" if front else "open_rear"
        lines.append(f"    <drivetrain type=\"{dtype}\"/>")
    pts = " ".join(f"<pt>{x:.6g} {y:.6g}</pt>" for x, y in outline)
    lines.append(f"    <chassis mass=\"{mass:.6g}\" zmin=\"{zmin:.6g}\" zmax=\"{zmax:.6g}\"><shape>{pts}</shape>"
                 "</chassis>")
    kp = GAIN_PER_KG_M * total * radius
    n_drive = 2 if dynamics == "ackermann_drivetrain" else 1  # an engine torque feeds two wheels
    kp *= n_drive
    ctrl = "twist_front_steer_pid" if dynamics == "ackermann_drivetrain" else "twist_pid"
    lines.append(f"    <controller class=\"{ctrl}\"><KP>{kp:.4g}</KP><KI>{kp:.4g}</KI><KD>0</KD>"
                 f"<max_torque>{0.8 * kp:.4g}</max_torque></controller>")
    lines.append("  </dynamics>")
    c_damping = DAMPING_PER_KG_M2 * total * radius ** 2
    lines.append(f"  <friction class=\"default\"><mu>0.8</mu><C_damping>{c_damping:.4g}</C_damping>"
                 "<C_rr>0.01</C_rr></friction>")
    lines += _visuals(model, links, height)
    lines.append("</vehicle:class>")
    return "\n".join(lines) + "\n"


def model_joint(model: UrdfModel, name: str) -> UrdfJoint:
    """The joint called ``name`` (KeyError when none)."""
    for j in model.joints:
        if j.name == name:
            return j
    raise KeyError(name)


# ---------------------------------------------------------------------------------------------------- description
def _description(model: UrdfModel, height: float, order: Sequence[UrdfWheel], virtual_spin: Sequence[UrdfJoint],
                 virtual_steer: Sequence[UrdfJoint]) -> RobotDescription:
    spin_of = {w.spin: (i, w) for i, w in enumerate(order) if w.spin}
    steer_of: dict[str, list[int]] = {}
    for i, w in enumerate(order):
        if w.steer:
            steer_of.setdefault(w.steer, []).append(i)
    driven = tuple(i for i, w in enumerate(order) if w.spin)
    steered = tuple(i for i, w in enumerate(order) if w.steer)
    vspin = {j.name for j in virtual_spin}
    vsteer = {j.name for j in virtual_steer}
    joints = []
    for j in model.joints:
        kw: dict[str, object] = {}
        if j.mimic is not None:
            kw = {"source": JointSource.MIMIC, "mimic": j.mimic.joint, "multiplier": j.mimic.multiplier,
                  "offset": j.mimic.offset}
        elif j.type == "fixed":
            kw = {"source": JointSource.FIXED}
        elif j.name in spin_of:
            i, w = spin_of[j.name]
            kw = {"source": JointSource.SPIN, "wheels": (i,), "multiplier": w.spin_sign}
        elif j.name in steer_of:
            sign = 1.0 if model.axis_in_root(j)[2] > 0 else -1.0
            kw = {"source": JointSource.STEER, "wheels": tuple(steer_of[j.name]), "multiplier": sign}
        elif j.name in vsteer:
            sign = 1.0 if model.axis_in_root(j)[2] > 0 else -1.0
            kw = {"source": JointSource.STEER_CENTRE, "wheels": steered, "multiplier": sign}
        elif j.name in vspin:
            sign = 1.0 if model.axis_in_root(j)[1] > 0 else -1.0
            kw = {"source": JointSource.SPIN, "wheels": driven, "multiplier": sign}
        else:
            kw = {"source": JointSource.PASSIVE}
        x, y, z = j.origin.xyz
        r, p, yw = j.origin.rpy
        joints.append(Joint(j.name, j.type, j.parent, j.child, (x, y, z, r, p, yw), j.axis,
                            lower=j.lower, upper=j.upper, velocity_limit=j.velocity, **kw))  # type: ignore[arg-type]
    return RobotDescription(urdf=model.text, root=model.root, height=height, joints=tuple(joints),
                            links=tuple(model.links), source=model.source)


# ---------------------------------------------------------------------------------------------------- entry points
def import_urdf(path: str | os.PathLike[str], *, class_name: str = "", xacro_args: Mapping[str, str] | None = None,
                package_dirs: Sequence[str | os.PathLike[str]] = ()) -> UrdfVehicle:
    """Read a URDF (or xacro) file and make its vehicle; ``class_name`` defaults to the robot's name.

    Raises:
        UrdfError: the file cannot be read or simulated (``file:line: what, how to fix``).
    """
    model = read_urdf(path, xacro_args=xacro_args, package_dirs=package_dirs)
    return analyse(model, class_name or model.name or Path(path).stem.split(".")[0])


@lru_cache(maxsize=32)
def _cached(path: str, mtime_ns: int, class_name: str, args: tuple[tuple[str, str], ...],
            dirs: tuple[str, ...]) -> UrdfVehicle:
    return import_urdf(path, class_name=class_name, xacro_args=dict(args), package_dirs=dirs)


_DESCRIPTIONS: weakref.WeakKeyDictionary[XmlNode, RobotDescription] = weakref.WeakKeyDictionary()


def parse_xacro_args(text: str) -> dict[str, str]:
    """``k:=v k2:=v2`` as a dict.

    Raises:
        ValueError: an item without ``:=`` (the message names it).
    """
    out = {}
    for item in text.split():
        k, sep, v = item.partition(":=")
        if not sep or not k:
            raise ValueError(f"xacro argument {item!r} is not name:=value")
        out[k] = v
    return out


def urdf_class_node(node: XmlNode, ctx: ParseContext) -> XmlNode:
    """The ``<vehicle:class urdf="...">`` ``node`` as a plain class node: the URDF's generated children, with the
    user's own children winning (a ``<dynamics>``, ``<friction>``, ... of the user replaces the generated one; a
    ``<controller>`` replaces the generated controller; ``<sensor>``s are added, and one named as a URDF link that
    sets no pose takes that link's pose). :func:`description_of` gives its robot description.

    Raises:
        WorldFileError: at the attribute for a missing file or bad ``xacro_args``; :class:`UrdfError` at the URDF's
            line for problems in it.
    """
    raw = ctx.require_attr(node, "urdf")
    base = Path(node.file).parent if node.file else Path(".")
    path = Path(raw) if Path(raw).is_absolute() else base / raw
    if not path.is_file():
        raise ctx.error(node, f"urdf={raw!r}: no such file ({path}); the path is relative to the world file",
                        attr="urdf")
    try:
        args = parse_xacro_args(ctx.attr(node, "xacro_args", "") or "")
    except ValueError as e:
        raise ctx.error(node, f"xacro_args: {e}; write name:=value items separated by spaces",
                        attr="xacro_args") from None
    dirs = tuple(str(Path(d) if Path(d).is_absolute() else base / d)
                 for d in (ctx.attr(node, "package_path", "") or "").split(":") if d)
    name = ctx.require_attr(node, "name")
    veh = _cached(str(path), path.stat().st_mtime_ns, name, tuple(sorted(args.items())), dirs)
    gen_root = next(n for n in parse_text(veh.class_xml, f"{path} (generated class)") if n.tag == "vehicle:class")
    user = list(node.children)
    user_tags = {c.tag for c in user}
    children = []
    for c in user:
        if c.tag == "controller":
            continue
        children.append(_posed_sensor(veh.description, c))
    ctrl = next((c for c in user if c.tag == "controller"), None)
    for g in gen_root.children:
        if g.tag in user_tags and g.tag not in ("sensor", "visual"):
            continue
        if g.tag == "dynamics" and ctrl is not None:
            g = replace(g, children=[*(k for k in g.children if k.tag != "controller"), ctrl])
        if g.tag == "visual" and "visual" in user_tags:
            continue
        children.append(g)
    out = replace(node, attrs={k: v for k, v in node.attrs.items()}, children=children)
    _DESCRIPTIONS[out] = veh.description
    return out


def urdf_vehicle_node(node: XmlNode, description: RobotDescription) -> XmlNode:
    """A ``<vehicle>`` ``node`` of a URDF class (its robot ``description``) with the class's sensor rule applied to
    its own ``<sensor>``s: one named as a URDF link that sets no pose takes that link's pose, so that the sensor
    simulates where tf puts its frame (the URDF link)."""
    children = [_posed_sensor(description, c) for c in node.children]
    if all(a is b for a, b in zip(children, node.children, strict=True)):
        return node
    return replace(node, children=children)


def _posed_sensor(description: RobotDescription, c: XmlNode) -> XmlNode:
    """``c`` itself, or, for a ``<sensor>`` named as a link of ``description`` that sets no pose (no ``<pose>``,
    ``<pose_3d>`` or ``<height>``), ``c`` with that link's ``<pose_3d>`` added."""
    if c.tag == "sensor" and c.attrs.get("name") in description.links and not any(
            s.tag in ("pose", "pose_3d", "height") for s in c.children):
        return replace(c, children=[*c.children, _link_pose_node(description, c.attrs["name"], c)])
    return c


def _link_pose_node(description: RobotDescription, link: str, at: XmlNode) -> XmlNode:
    """``<pose_3d>`` (x y z yaw° pitch° roll°, vehicle frame, z above the ground) of URDF link ``link``."""
    model_t = _link_transform(description, link)
    roll, pitch, yaw = matrix_rpy(model_t[:3, :3])
    x, y, z = (float(c) for c in model_t[:3, 3])
    text = f"{x!r} {y!r} {z + description.height!r} {math.degrees(yaw)!r} {math.degrees(pitch)!r} " \
           f"{math.degrees(roll)!r}"
    return XmlNode("pose_3d", text=text, file=at.file, line=at.line)


def _link_transform(description: RobotDescription, link: str) -> np.ndarray:
    """4×4 of ``link`` in the root frame at zero positions, from the description's joints."""
    by_child = {j.child: j for j in description.joints}
    chain = []
    cur = link
    while cur in by_child:
        chain.append(by_child[cur])
        cur = by_child[cur].parent
    t = np.eye(4)
    from mvsim_core.io.urdf import Origin

    for j in reversed(chain):
        t = t @ Origin(j.origin[:3], j.origin[3:]).matrix()
    return t


def description_of(cls_node: XmlNode | None) -> RobotDescription | None:
    """The robot description of a class node made by :func:`urdf_class_node` (None for any other)."""
    if cls_node is None:
        return None
    return _DESCRIPTIONS.get(cls_node)
