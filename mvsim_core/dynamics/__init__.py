"""Vehicle dynamics: wheel-ground friction models (:mod:`.friction`), motor controllers and their PID
(:mod:`.controllers`), differentials, terrain, Box2D bodies and the physics step (:mod:`.physics`).

Modules with compiled kernels import :mod:`mvsim_core.jit` first (package-wide kernel cache); the model and
controller modules read while loading a world do not import numba, so loading stays fast.
"""
