"""The robot description of a vehicle that came from no URDF, generated from its chassis, wheels and sensors.

Naming (other parts rely on it): the root link ``base_link`` is the vehicle's frame, on the ground at its reference
point (height 0); a fixed child ``base_footprint`` (identity) and a fixed ``chassis`` link (identity; its box sits
between the chassis' ``zmin`` and ``zmax`` over its footprint's bounds). Each wheel with tag ``T`` (``l_wheel``,
``fr_wheel``, ...) is a link ``T`` on a continuous joint ``T_joint`` at (x, y, radius) turned by the wheel's mounting
yaw, axis +y (a positive angle rolls the vehicle forward; source :attr:`JointSource.SPIN` of that wheel). A wheel
the dynamics class steers (Ackermann's ``fl_wheel`` and ``fr_wheel``) hangs from a link ``T_steer`` on a revolute
joint ``T_steer_joint`` about +z at (x, y, radius) (source :attr:`JointSource.STEER`), and its spin joint sits at the
identity of that link. Each sensor is a link named as the sensor on a fixed joint ``<sensor>_joint`` from
``base_link`` at its ``pose_3d``.

Frames: all in the vehicle frame (x forward, y left, z up), metres and radians; URDF origins as ``xyz`` and
fixed-axis ``rpy`` (roll about x, then pitch about y, then yaw about z: the same rotation as the simulator's
yaw-pitch-roll).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING
from xml.sax.saxutils import quoteattr

from mvsim_core.objects.vehicles.description import Joint, JointSource, RobotDescription

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.objects.wheel import Wheel

ROOT_LINK = "base_link"
FOOTPRINT_LINK = "base_footprint"
CHASSIS_LINK = "chassis"
STEERED_WHEELS = (2, 3)
"""Indices of the wheels a steering dynamics class turns (Ackermann's ``fl_wheel``, ``fr_wheel``): its ``steer()``
sets their yaw to the steering angle outright, so their mounting yaw is 0."""

Origin = tuple[float, float, float, float, float, float]


def steered_wheels(veh: Vehicle) -> tuple[int, ...]:
    """The indices of the wheels the vehicle's dynamics class turns (none for a class that does not steer)."""
    n = len(veh.wheels)
    return tuple(i for i in STEERED_WHEELS if i < n) if veh.dynamics.steerable else ()


def _num(v: float) -> str:
    return repr(float(v))


def _origin(o: Origin) -> str:
    x, y, z, roll, pitch, yaw = o
    return f'<origin xyz="{_num(x)} {_num(y)} {_num(z)}" rpy="{_num(roll)} {_num(pitch)} {_num(yaw)}"/>'


def _rgba(color: tuple[int, ...]) -> str:
    return " ".join(_num(c / 255.0) for c in color)


def _inertial(mass: float, origin: Origin, ixx: float, iyy: float, izz: float) -> str:
    return (f"<inertial>{_origin(origin)}<mass value=\"{_num(mass)}\"/>"
            f"<inertia ixx=\"{_num(ixx)}\" ixy=\"0.0\" ixz=\"0.0\" iyy=\"{_num(iyy)}\" iyz=\"0.0\" "
            f"izz=\"{_num(izz)}\"/></inertial>")


def _shape_link(name: str, geometry: str, origin: Origin, color: tuple[int, ...], inertial: str) -> str:
    """A link with one visual and one collision of ``geometry`` at ``origin`` (in the link) and its inertial."""
    mat = f"<material name={quoteattr(name + '_material')}><color rgba=\"{_rgba(color)}\"/></material>"
    return (f"  <link name={quoteattr(name)}>\n"
            f"    <visual>{_origin(origin)}<geometry>{geometry}</geometry>{mat}</visual>\n"
            f"    <collision>{_origin(origin)}<geometry>{geometry}</geometry></collision>\n"
            f"    {inertial}\n  </link>\n")


def _chassis_link(veh: Vehicle) -> str:
    """The chassis: a box over its footprint's bounds between zmin and zmax (m, vehicle frame), its mass spread
    evenly."""
    ch = veh.chassis
    fp = ch.footprint
    if fp.size:
        x0, y0 = float(fp[:, 0].min()), float(fp[:, 1].min())
        x1, y1 = float(fp[:, 0].max()), float(fp[:, 1].max())
    else:
        x0 = y0 = x1 = y1 = 0.0
    sx, sy, sz = max(x1 - x0, 1e-3), max(y1 - y0, 1e-3), max(ch.zmax - ch.zmin, 1e-3)
    centre: Origin = (0.5 * (x0 + x1), 0.5 * (y0 + y1), 0.5 * (ch.zmin + ch.zmax), 0.0, 0.0, 0.0)
    m = ch.mass
    inertial = _inertial(m, centre, m * (sy * sy + sz * sz) / 12.0, m * (sx * sx + sz * sz) / 12.0,
                         m * (sx * sx + sy * sy) / 12.0)
    return _shape_link(CHASSIS_LINK, f'<box size="{_num(sx)} {_num(sy)} {_num(sz)}"/>', centre, ch.color, inertial)


def _wheel_link(w: Wheel) -> str:
    """A wheel: a cylinder of its radius and width (m) whose axis is the link's y, its spin inertia about y."""
    r, width, m = w.radius, w.width, w.mass
    across = m * (3.0 * r * r + width * width) / 12.0
    turn: Origin = (0.0, 0.0, 0.0, 0.5 * math.pi, 0.0, 0.0)  # URDF cylinders lie along z: turn z onto y
    inertial = _inertial(m, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), across, w.inertia, across)
    return _shape_link(w.name, f'<cylinder radius="{_num(r)}" length="{_num(width)}"/>', turn, w.color, inertial)


def _joint_xml(j: Joint, limit_effort: float = 1000.0) -> str:
    s = (f"  <joint name={quoteattr(j.name)} type=\"{j.type}\">\n"
         f"    <parent link={quoteattr(j.parent)}/><child link={quoteattr(j.child)}/>{_origin(j.origin)}")
    if j.movable:
        ax = " ".join(_num(a) for a in j.axis)
        s += f"<axis xyz=\"{ax}\"/>"
    if j.type == "revolute":
        s += (f"<limit lower=\"{_num(j.lower)}\" upper=\"{_num(j.upper)}\" effort=\"{_num(limit_effort)}\" "
              f"velocity=\"{_num(j.velocity_limit if math.isfinite(j.velocity_limit) else 10.0)}\"/>")
    return s + "\n  </joint>\n"


def _steer_limit(veh: Vehicle) -> float:
    """The largest angle (rad) a steered wheel turns: the inner wheel's at the steering limit."""
    angles = getattr(veh.dynamics, "front_wheel_angles", None)
    limit = getattr(veh.dynamics, "max_steer", 0.5 * math.pi)
    if angles is None:
        return float(limit)
    return max(abs(a) for a in (*angles(limit), *angles(-limit)))


def generated_description(veh: Vehicle) -> RobotDescription:
    """The robot description of ``veh`` made from its chassis, wheels and sensors (names, frames and units in the
    module docstring); valid URDF for urdf_parser_py, yourdfpy and robot_state_publisher."""
    joints: list[Joint] = [Joint(f"{FOOTPRINT_LINK}_joint", "fixed", ROOT_LINK, FOOTPRINT_LINK),
                           Joint(f"{CHASSIS_LINK}_joint", "fixed", ROOT_LINK, CHASSIS_LINK)]
    links: list[str] = [ROOT_LINK, FOOTPRINT_LINK, CHASSIS_LINK]
    body = [f"  <link name={quoteattr(ROOT_LINK)}/>\n", f"  <link name={quoteattr(FOOTPRINT_LINK)}/>\n",
            _chassis_link(veh)]
    steered = steered_wheels(veh)
    steer_limit = _steer_limit(veh) if steered else 0.0
    for i, w in enumerate(veh.wheels):
        at: Origin = (float(w.x), float(w.y), float(w.radius), 0.0, 0.0, 0.0)
        parent = ROOT_LINK
        if i in steered:
            steer_link = f"{w.name}_steer"
            joints.append(Joint(f"{steer_link}_joint", "revolute", ROOT_LINK, steer_link, at, (0.0, 0.0, 1.0),
                                JointSource.STEER, (i,), lower=-steer_limit, upper=steer_limit))
            links.append(steer_link)
            body.append(f"  <link name={quoteattr(steer_link)}/>\n")
            parent, at = steer_link, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        else:
            at = (*at[:5], float(w.yaw))
        joints.append(Joint(f"{w.name}_joint", "continuous", parent, w.name, at, (0.0, 1.0, 0.0),
                            JointSource.SPIN, (i,)))
        links.append(w.name)
        body.append(_wheel_link(w))
    for s in veh.sensors.values():
        if s.name in links:  # a sensor named as a link of the vehicle: the link stands for it
            continue
        x, y, z, yaw, pitch, roll = (float(v) for v in s.pose)
        joints.append(Joint(f"{s.name}_joint", "fixed", ROOT_LINK, s.name, (x, y, z, roll, pitch, yaw)))
        links.append(s.name)
        body.append(f"  <link name={quoteattr(s.name)}/>\n")
    urdf = (f"<?xml version=\"1.0\"?>\n<robot name={quoteattr(veh.name)}>\n" + "".join(body)
            + "".join(_joint_xml(j) for j in joints) + "</robot>\n")
    return RobotDescription(urdf=urdf, root=ROOT_LINK, height=0.0, joints=tuple(joints), links=tuple(links))
