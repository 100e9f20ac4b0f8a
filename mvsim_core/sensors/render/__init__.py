"""Headless rendering of the world for cameras (and, later, the desktop viewer).

Layers, from GL-free to GL:

* :mod:`.camera_model` — pinhole projection, the optical frame and the matrices a renderer needs (numpy only);
* :mod:`.mesh_primitives` — the drawable parts (prisms, cylinders, height fields, lines, points, textures; numpy
  only);
* :mod:`.scene_geometry` — the world as triangle meshes, lines and points, each attached to a *node* (the static
  world, a vehicle body, a wheel, a block, an actor) whose pose is read from the simulation at every frame
  (numpy only; the viewer can reuse it);
* :mod:`.gl_context` — an offscreen OpenGL context: EGL surfaceless first, OSMesa next; imports OpenGL only when
  asked for a context;
* :mod:`.renderer` — uploads a :class:`~.scene_geometry.SceneGeometry` once and renders colour + exact depth images
  from any pinhole camera pose.

Importing this package (or :mod:`.scene_geometry`, :mod:`.mesh_primitives`, :mod:`.camera_model`) never imports
OpenGL.
"""
