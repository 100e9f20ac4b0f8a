"""Motor controllers of vehicles, one module per controller class (``raw``, ``twist_pid``, ``twist_ideal``,
``front_steer_pid``, ``twist_front_steer_pid``, ``trajectory``), plus the shared PID parameters (:mod:`.pid`).

Importing this package registers them; :meth:`Controller.from_xml` builds the one a ``<controller>`` names for a
vehicle's dynamics family.
"""

from mvsim_core.dynamics.controllers.base import (
    Command,
    Controller,
    Family,
    Twist2D,
    TwistController,
    controller_from_xml,
)
from mvsim_core.dynamics.controllers.front_steer_pid import FrontSteerPid
from mvsim_core.dynamics.controllers.pid import PidConfig
from mvsim_core.dynamics.controllers.raw import AckermannDrivetrainRaw, AckermannRaw, DifferentialRaw
from mvsim_core.dynamics.controllers.trajectory import AckermannTrajectory, DifferentialTrajectory
from mvsim_core.dynamics.controllers.twist_front_steer_pid import (
    AckermannDrivetrainTwistFrontSteerPid,
    AckermannTwistFrontSteerPid,
)
from mvsim_core.dynamics.controllers.twist_ideal import AckermannTwistIdeal, DifferentialTwistIdeal
from mvsim_core.dynamics.controllers.twist_pid import DifferentialTwistPid

__all__ = [
    "AckermannDrivetrainRaw",
    "AckermannDrivetrainTwistFrontSteerPid",
    "AckermannRaw",
    "AckermannTrajectory",
    "AckermannTwistFrontSteerPid",
    "AckermannTwistIdeal",
    "Command",
    "Controller",
    "DifferentialRaw",
    "DifferentialTrajectory",
    "DifferentialTwistIdeal",
    "DifferentialTwistPid",
    "Family",
    "FrontSteerPid",
    "PidConfig",
    "Twist2D",
    "TwistController",
    "controller_from_xml",
]
