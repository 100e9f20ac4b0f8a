"""The spec checked against its world, once, before any run: the world loads (with the first run's seed and
parameter values), every swept variable and include parameter is used by it, the vehicle exists, a metric that
measures a vehicle has one (``min_obstacle_distance``: one with a 2D lidar), the control period is at least one
physics step, and every ``module:function`` imports. Each problem is a :class:`~mvsim_core.sweep.spec.SpecError` at
its line in the spec (a world file problem: the world's own ``file:line``).

Only the first run's values are loaded here; a value that breaks the world in a later run makes that run a failed row.
"""

from __future__ import annotations

from mvsim_core.sensors.outputs import OutputKind, output_of
from mvsim_core.sweep.callables import CallableError, resolve
from mvsim_core.sweep.expand import expand
from mvsim_core.sweep.spec import SpecError, SweepSpec
from mvsim_core.xml.overrides import OverrideError


def check_against_world(spec: SweepSpec) -> None:
    """Check ``spec`` against its world (see the module docstring).

    Raises:
        SpecError: at the spec's line. mvsim_core.WorldFileError: the world file itself is wrong.
    """
    from mvsim_core.loader import load_world

    first = next(expand(spec))
    try:
        world = load_world(spec.world, seed=first.seed, variables=first.variables(spec),
                           include_params=first.include_params(spec))
    except OverrideError as e:
        param = next((p for p in spec.parameters if p.name == e.name and
                      (p.kind == "variable") == (e.kind == "variable") and p.pattern == e.pattern), None)
        raise SpecError(str(spec.path), param.line if param else 0, e.message) from None
    if spec.vehicle is not None and spec.vehicle not in world.vehicles:
        raise spec.error("vehicle", f"no vehicle '{spec.vehicle}' in {spec.world.name}; it has "
                                    f"{', '.join(world.vehicles) or 'no vehicle'}")
    vehicle = world.vehicles[spec.vehicle] if spec.vehicle else next(iter(world.vehicles.values()), None)
    needs_vehicle = [m.name for m in spec.metrics if not m.function]
    if vehicle is None and (needs_vehicle or spec.controller.type in ("twists", "goto")):
        what = f"metrics {', '.join(needs_vehicle)}" if needs_vehicle else f"controller {spec.controller.type}"
        raise spec.error("metrics" if needs_vehicle else "controller",
                         f"{spec.world.name} has no vehicle, and the {what} need one; add a <vehicle> to the world, "
                         f"or leave them out")
    if vehicle is not None and any(m.name == "min_obstacle_distance" and not m.function for m in spec.metrics):
        if not any(output_of(s, OutputKind.SCAN) is not None for s in vehicle.sensors.values()):
            line = next(m.line for m in spec.metrics if m.name == "min_obstacle_distance")
            raise SpecError(str(spec.path), line or spec.lines.get("metrics", 0),
                            f"metric min_obstacle_distance reads the 2D lidars of vehicle '{vehicle.name}', and it "
                            f"has none; add a <sensor class=\"laser\"> to it, or leave the metric out")
    dt = world.timestep
    if spec.control_period < dt - 1e-12:
        raise spec.error("control_period", f"control_period {spec.control_period:g} s is shorter than the world's "
                                           f"physics step ({dt:g} s); give at least {dt:g}")
    refs = [(m.function, m.line) for m in spec.metrics if m.function]
    if spec.controller.type == "policy":
        refs.insert(0, (spec.controller.function, spec.lines.get("controller.function", 0)))
    for ref, line in refs:
        try:
            resolve(ref, spec.base_dir)
        except CallableError as e:
            raise SpecError(str(spec.path), line, str(e)) from None
