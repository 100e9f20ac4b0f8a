"""The desktop viewer (glfw + PyOpenGL) and its keyboard teleop.

Importing this package imports neither OpenGL nor glfw: :mod:`.teleop` and the camera maths are plain Python, and the
window module is imported only when a window is asked for.
"""
