"""Seeded parameter sweeps (``mvsim sweep SPEC.yaml``): a world, swept world variables and ``<include>``
parameters, seeds, a controller, a duration and metrics; every run on Ray, one Parquet row per run.

* :mod:`~mvsim_core.sweep.spec`: the YAML spec (:func:`~mvsim_core.sweep.spec.load_spec`), its errors with lines.
* :mod:`~mvsim_core.sweep.validate`: the spec checked against its world before any run.
* :mod:`~mvsim_core.sweep.expand`: the runs (cartesian product × seeds) and their stable ids.
* :mod:`~mvsim_core.sweep.execute`: one run → one row (controllers, metrics, timeout, errors).
* :mod:`~mvsim_core.sweep.controllers`, :mod:`~mvsim_core.sweep.metrics`, :mod:`~mvsim_core.sweep.callables`,
  :mod:`~mvsim_core.sweep.context`: what drives and measures a run.
* :mod:`~mvsim_core.sweep.results`: the Parquet results, streamed and resumable.
* :mod:`~mvsim_core.sweep.ray_runner`: the sweep on Ray (imports ``ray``; nothing else here does).
"""
