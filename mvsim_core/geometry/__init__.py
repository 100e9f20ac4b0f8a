"""Geometry shared by every part of the simulator: rotations and poses (:mod:`.rotations`, compiled twins in
:mod:`.rotation_kernels`) and polygons (:mod:`.polygons`)."""
