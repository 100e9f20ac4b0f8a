"""``<friction class="...">``: the wheel-ground friction model of a vehicle (reference §1.11, §2.3).

One model instance per wheel is created by the vehicle; the element sits next to ``<dynamics>``, not inside it.
Without a ``<friction>`` element a vehicle uses class ``default`` with its defaults. Each model lives in its own module
and registers itself here by its ``xml_class``.

All models work per wheel in the vehicle frame: input the wheel's velocity at its contact point, its load, spin rate
and motor torque; output the longitudinal/lateral force on the chassis at the contact point and the new wheel spin.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param, ParamValues, read_params, table_names, warn_unknown_children

DEFAULT_CLASS = "default"

# Parameters shared by several models.
MU = Param("mu", Kind.FLOAT, 0.8, min=0.0, doc="Coulomb friction coefficient: |F| <= mu*m*g")
C_DAMPING = Param("C_damping", Kind.FLOAT, 0.01, "N·m·s/rad", min=0.0, doc="viscous friction of the wheel axle")
C_RR = Param("C_rr", Kind.FLOAT, 0.0, min=0.0, doc="rolling resistance coefficient (torque C_rr*m*g*R)")


class FrictionModel:
    """Base of the friction models.

    Class attributes:
        xml_class: value of ``class="..."`` selecting the model.
        PARAMS: its parameters with upstream defaults and units.
        has_mu: whether the model has a Coulomb coefficient ``mu`` (and so honours ``friction_mu`` property regions).
        registry: xml class -> model class, filled automatically.

    Attributes:
        params: typed parameter values.
        node: the ``<friction>`` element, or None when the vehicle has none (defaults).
    """

    xml_class: ClassVar[str] = ""
    PARAMS: ClassVar[tuple[Param, ...]] = ()
    has_mu: ClassVar[bool] = True
    registry: ClassVar[dict[str, type[FrictionModel]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.xml_class:
            FrictionModel.registry[cls.xml_class] = cls

    def __init__(self, *, params: ParamValues, node: XmlNode | None = None) -> None:
        self.params = params
        self.node = node

    @classmethod
    def defaults(cls) -> FrictionModel:
        """An instance with every parameter at its default (``default`` class when called on the base)."""
        target = FrictionModel.registry[DEFAULT_CLASS] if cls is FrictionModel else cls
        values = ParamValues()
        for p in target.PARAMS:
            values[p.name] = p.default
        return target(params=values, node=None)

    @classmethod
    def from_xml(cls, node: XmlNode | None, ctx: ParseContext) -> FrictionModel:
        """Build the model of a ``<friction class="...">`` element; None gives class ``default`` with its defaults.

        Called on the base class, dispatches on ``class``; called on a subclass, builds that subclass.

        Raises:
            WorldFileError: missing/unknown class (the message lists the known ones) or a bad value.
        """
        if node is None:
            return cls.defaults()
        target = cls
        if cls is FrictionModel:
            known = ", ".join(sorted(FrictionModel.registry))
            name = ctx.attr(node, "class")
            if not name:
                raise ctx.error(node, f'<friction> needs the attribute class="..."; known friction models: {known}')
            found = FrictionModel.registry.get(name)
            if found is None:
                raise ctx.error(node, f'unknown friction model class "{name}"; known friction models: {known}',
                                attr="class")
            target = found
        warn_unknown_children(node, table_names(target.PARAMS), ctx, f'<friction class="{target.xml_class}">')
        model = target(params=read_params(target.PARAMS, [node], ctx), node=node)
        model._validate(ctx)
        return model

    def _validate(self, ctx: ParseContext) -> None:
        """Cross-parameter checks of the subclass (single-value ranges are in PARAMS)."""

    def where(self, name: str) -> XmlNode | None:
        """Element where parameter ``name`` was written (else the ``<friction>`` element)."""
        return self.params.where.get(name, self.node)

    # Common parameters (every model has them).
    @property
    def c_damping(self) -> float:
        """Viscous friction of the wheel axle, N·m·s/rad."""
        return float(self.params["C_damping"])

    @property
    def c_rr(self) -> float:
        """Rolling resistance coefficient (dimensionless; torque = C_rr·m·g·R)."""
        return float(self.params["C_rr"])

    def summary(self) -> str:
        shown = ", ".join(f"{p.name}={self.params[p.name]:g}" for p in self.PARAMS)
        return f"{self.xml_class} ({shown})"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.summary()}>"


def friction_from_xml(node: XmlNode | None, ctx: ParseContext) -> FrictionModel:
    """Build the friction model of a ``<friction class="...">`` element (None: ``default`` with its defaults).

    Same as :meth:`FrictionModel.from_xml`.
    """
    return FrictionModel.from_xml(node, ctx)
