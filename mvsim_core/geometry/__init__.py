"""Geometry shared by every part of the simulator: rotations and poses (:mod:`.rotations`), polygons (:mod:`.polygons`)."""
