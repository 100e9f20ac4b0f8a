"""File readers for world assets: occupancy grids (image / ROS YAML / MRPT ``.gridmap``), elevation data,
3D meshes and remote (downloaded, cached) model URIs.

Every reader raises :class:`mvsim_core.errors.AssetError` for a missing, unreadable or corrupt file.
"""
