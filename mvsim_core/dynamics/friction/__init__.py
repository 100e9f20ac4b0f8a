"""Wheel-ground friction models, one module each: ``default``, ``wardiagnemma``, ``ellipse``.

Importing this package registers them; :meth:`FrictionModel.from_xml` builds the one a ``<friction>`` names and
:meth:`FrictionModel.from_string` finds a model class by name. Each model module declares the model's kernel id and
parameter columns next to its law; :mod:`.kernel` compiles the laws and dispatches on the id.
"""

from mvsim_core.dynamics.friction.base import FrictionModel, friction_from_xml
from mvsim_core.dynamics.friction.default import DefaultFriction
from mvsim_core.dynamics.friction.ellipse import EllipseFriction
from mvsim_core.dynamics.friction.wardiagnemma import WardIagnemmaFriction

__all__ = ["DefaultFriction", "EllipseFriction", "FrictionModel", "WardIagnemmaFriction", "friction_from_xml"]
