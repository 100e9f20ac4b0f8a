"""``<friction class="...">``: the wheel-ground friction model of a vehicle (reference §1.11, §2.3).

One model instance per vehicle, shared by its wheels; the element sits next to ``<dynamics>``, not inside it.
Without a ``<friction>`` element a vehicle uses class ``default`` with its defaults. Each model lives in its own module
and registers itself here by its ``xml_class``; :meth:`FrictionModel.from_string` finds it by that name.

All models work per wheel in the wheel frame (the vehicle frame turned by the wheel yaw; x along the wheel, y to its
left): input the wheel's velocity at its contact point (m/s), its load, spin rate (rad/s) and motor torque (N·m);
output the longitudinal/lateral force on the chassis at the contact point (N) and the new wheel spin (rad/s).

The compiled kernel (:mod:`.kernel`) sees a model as its ``kernel_id`` and one row of a per-wheel parameter matrix
(:class:`mvsim_core.dynamics.wheels.WheelArrays` ``params``). Each model declares the column of each of its parameters
in ``COLUMNS``; the columns of the parameters several models share are defined here (``P_MU``, ``P_CDAMP``,
``P_CRR``), those of a model's own parameters in its module. A parameter name has the same column in every model and
two names never share a column, so property regions can override a column whatever the model (checked when a model
class is defined).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param, ParamValues, read_params, table_names, warn_unknown_children

if TYPE_CHECKING:
    import numpy as np

DEFAULT_CLASS = "default"

# Parameters shared by several models, and their columns in the per-wheel parameter matrix.
MU = Param("mu", Kind.FLOAT, 0.8, min=0.0, doc="Coulomb friction coefficient: |F| <= mu*m*g")
C_DAMPING = Param("C_damping", Kind.FLOAT, 0.01, "N·m·s/rad", min=0.0, doc="viscous friction of the wheel axle")
C_RR = Param("C_rr", Kind.FLOAT, 0.0, min=0.0, doc="rolling resistance coefficient (torque C_rr*m*g*R)")
P_MU, P_CDAMP, P_CRR = 0, 1, 2


class FrictionModel:
    """Base of the friction models.

    Class attributes (declared by each model):
        xml_class: value of ``class="..."`` selecting the model.
        PARAMS: its parameters with upstream defaults and units.
        kernel_id: the number the compiled kernel dispatches on (:func:`.kernel.wheel_friction`).
        COLUMNS: parameter name -> column of the per-wheel parameter matrix, one entry per parameter in PARAMS.

    Class attributes (derived):
        has_mu: whether the model has a Coulomb coefficient ``mu``, and so honours ``friction_mu`` property regions
            (every model has ``C_rr`` and honours ``friction_C_rr``).
        registry: xml class -> model class, filled when a model class is defined.

    Attributes:
        params: typed parameter values.
        node: the ``<friction>`` element, or None when the vehicle has none (defaults).
    """

    xml_class: ClassVar[str] = ""
    PARAMS: ClassVar[tuple[Param, ...]] = ()
    kernel_id: ClassVar[int] = -1
    COLUMNS: ClassVar[dict[str, int]] = {}
    has_mu: ClassVar[bool] = False
    registry: ClassVar[dict[str, type[FrictionModel]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.has_mu = any(p.name == MU.name for p in cls.PARAMS)
        if cls.xml_class:
            _check_declaration(cls)
            FrictionModel.registry[cls.xml_class] = cls

    def __init__(self, *, params: ParamValues, node: XmlNode | None = None) -> None:
        self.params = params
        self.node = node

    @classmethod
    def from_string(cls, name: str) -> type[FrictionModel]:
        """The model class whose ``xml_class`` is ``name``.

        Raises:
            ValueError: unknown name; the message lists the known ones.
        """
        found = FrictionModel.registry.get(name)
        if found is None:
            raise ValueError(f'unknown friction model class "{name}"; known friction models: {_known()}')
        return found

    @staticmethod
    def n_columns() -> int:
        """Width of the per-wheel parameter matrix: one column per parameter name over all registered models."""
        return 1 + max(col for m in FrictionModel.registry.values() for col in m.COLUMNS.values())

    def fill_columns(self, rows: np.ndarray) -> None:
        """Write this model's parameter values into their columns of ``rows`` (k, n_columns()); other columns are
        left as they are."""
        for name, col in self.COLUMNS.items():
            rows[:, col] = float(self.params[name])

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
            name = ctx.attr(node, "class")
            if not name:
                raise ctx.error(node, f'<friction> needs the attribute class="..."; known friction models: '
                                      f'{_known()}')
            try:
                target = FrictionModel.from_string(name)
            except ValueError as e:
                raise ctx.error(node, str(e), attr="class") from None
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


def _known() -> str:
    return ", ".join(sorted(FrictionModel.registry))


def _check_declaration(cls: type[FrictionModel]) -> None:
    """Raise TypeError unless ``cls`` gives every parameter a column, its columns agree with every registered model
    (same name, same column; different names, different columns) and its kernel id is free."""
    if cls.kernel_id < 0:
        raise TypeError(f"friction model {cls.xml_class} declares no kernel_id")
    names = [p.name for p in cls.PARAMS]
    if sorted(cls.COLUMNS) != sorted(names):
        raise TypeError(f"friction model {cls.xml_class}: COLUMNS {sorted(cls.COLUMNS)} must name exactly its "
                        f"parameters {sorted(names)}")
    if len(set(cls.COLUMNS.values())) != len(cls.COLUMNS) or min(cls.COLUMNS.values(), default=0) < 0:
        raise TypeError(f"friction model {cls.xml_class}: columns must be distinct and not negative: {cls.COLUMNS}")
    for other in FrictionModel.registry.values():
        if other.xml_class == cls.xml_class:
            continue
        if other.kernel_id == cls.kernel_id:
            raise TypeError(f"friction models {other.xml_class} and {cls.xml_class} share kernel id {cls.kernel_id}")
        for name, col in cls.COLUMNS.items():
            for o_name, o_col in other.COLUMNS.items():
                if (name == o_name) != (col == o_col):
                    raise TypeError(f"friction model {cls.xml_class}: column {col} of {name} clashes with column "
                                    f"{o_col} of {o_name} in {other.xml_class}")
