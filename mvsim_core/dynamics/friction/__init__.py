"""Wheel-ground friction models, one module each: ``default``, ``wardiagnemma``, ``ellipse``.

Importing this package registers them; :meth:`FrictionModel.from_xml` builds the one a ``<friction>`` names.
"""

from mvsim_core.dynamics.friction.base import FrictionModel, friction_from_xml
from mvsim_core.dynamics.friction.default import DefaultFriction
from mvsim_core.dynamics.friction.ellipse import EllipseFriction
from mvsim_core.dynamics.friction.wardiagnemma import WardIagnemmaFriction

__all__ = ["DefaultFriction", "EllipseFriction", "FrictionModel", "WardIagnemmaFriction", "friction_from_xml"]
