#!/usr/bin/env bash
# ROS 2 for mvsim_ros2's bridge node (called by scripts/setup.sh; safe to run alone: bash scripts/setup_ros.sh).
#
# * A system ROS 2 (ROS_DISTRO set, e.g. after `source /opt/ros/<distro>/setup.bash`, and rclpy importable by the
#   venv's interpreter) is used as it is: nothing is installed.
# * Otherwise ROS 2 Kilted comes from the PyPI `ros-*` wheels (Fast DDS), pinned in
#   scripts/ros_interfaces/requirements-ros.txt, installed into .venv. The venv is then an ament prefix: rclpy and
#   the message packages work from .venv/bin/python with no environment variables.
# * tf2_msgs and ackermann_msgs are not on PyPI: they are generated from the definitions in scripts/ros_interfaces/
#   with the wheels' own rosidl toolchain (cmake + g++) and installed into the venv prefix, so their type hashes are
#   the standard ones.
#
# * The pure-Python ROS 2 command-line tools (ros2 launch/run/topic/node/param/service/pkg, launch_ros) and
#   teleop_twist_keyboard are not on PyPI either. When their sources are beside the checkout
#   (../shared/third_party/ros2, or MVSIM_ROS_TOOLS=DIR) they are pip-installed into .venv, composition_interfaces and
#   simulation_interfaces are generated like tf2_msgs, and the package is registered in the venv's ament index
#   (scripts/ament_register.sh), so that `.venv/bin/ros2 launch mvsim_ros2 demo.launch.py` works from a checkout.
#   A user with a ROS 2 installation already has all of these.
#
# Idempotent: the pip step and each interface package are skipped while a stamp in .venv holds the hash of their
# inputs. MVSIM_SKIP_ROS=1 skips this whole step (the ROS tests then skip).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
VPY="$VENV/bin/python"
SRC=scripts/ros_interfaces
REQ="$SRC/requirements-ros.txt"
INTERFACES=(tf2_msgs ackermann_msgs)
TOOLS_DIR=${MVSIM_ROS_TOOLS:-../shared/third_party/ros2}
# the pure-Python tools, in dependency order (each pip-installed from its folder under TOOLS_DIR)
TOOLS=(rosidl_runtime_py ros2cli ros2pkg ros2run ros2topic ros2node ros2param ros2service
       launch launch_xml launch_yaml launch_ros ros2launch teleop_twist_keyboard)
TOOL_INTERFACES=(composition_interfaces simulation_interfaces)

say() { echo "setup-ros: $*"; }
hash_of() { cat "$@" | sha256sum | cut -c1-16; }

if [ "${MVSIM_SKIP_ROS:-0}" = 1 ]; then
  say "skipped (MVSIM_SKIP_ROS=1)"
  exit 0
fi
[ -x "$VPY" ] || { echo "setup-ros: $VPY not found; run scripts/setup.sh first" >&2; exit 1; }

# --- a system ROS 2 -------------------------------------------------------------------------------------------------
if [ -n "${ROS_DISTRO:-}" ] && "$VPY" -c 'import rclpy' >/dev/null 2>&1; then
  say "using the system ROS 2 '$ROS_DISTRO' (rclpy from $("$VPY" -c 'import os, rclpy; print(os.path.dirname(rclpy.__file__))'))"
  for pkg in "${INTERFACES[@]}"; do
    if ! "$VPY" -c "import $pkg.msg" >/dev/null 2>&1; then
      say "WARNING: $pkg is missing; install it: apt-get install ros-$ROS_DISTRO-${pkg//_/-}"
    fi
  done
  exit 0
fi

# --- ROS 2 wheels from PyPI -----------------------------------------------------------------------------------------
pyver=$("$VPY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
pip_stamp="$VENV/.ros-wheels-stamp"
pip_want=$(echo "$pyver" | cat - "$REQ" | sha256sum | cut -c1-16)
if [ "$(cat "$pip_stamp" 2>/dev/null)" != "$pip_want" ] || ! "$VPY" -c 'import rclpy' >/dev/null 2>&1; then
  say "installing ROS 2 Kilted wheels (rclpy, Fast DDS, message packages, rosidl build tools)"
  "$VPY" -m pip install -q --disable-pip-version-check -r "$REQ"
  echo "$pip_want" > "$pip_stamp"
fi

# The wheels' exported CMake targets name the include dirs of the machine that built them
# (/opt/python/cpXY-cpXY/...); point them at this interpreter's Python and numpy headers. Idempotent.
py_inc=$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
np_inc=$("$VPY" -c 'import numpy; print(numpy.get_include())')
mapfile -t exports < <(grep -rl '/opt/python/cp' "$VENV/share" --include='*__rosidl_generator_pyExport.cmake' \
                        2>/dev/null || true)
if [ ${#exports[@]} -gt 0 ]; then
  sed -i -E -e "s#/opt/python/cp[0-9]+-cp[0-9]+/lib/python3\.[0-9]+/site-packages/numpy/_core/include#${np_inc}#g" \
            -e "s#/opt/python/cp[0-9]+-cp[0-9]+/include/python3\.[0-9]+#${py_inc}#g" "${exports[@]}"
fi

for tool in cmake g++ make; do
  command -v "$tool" >/dev/null 2>&1 || { echo "setup-ros: '$tool' is needed to build $SRC (apt-get install cmake g++ make)" >&2; exit 1; }
done

# --- tf2_msgs and ackermann_msgs, generated into the venv prefix ----------------------------------------------------
prefix=$(cd "$VENV" && pwd)
build_root="$prefix/build/ros_interfaces"
jobs=$(nproc 2>/dev/null || echo 2)
sources=()
for pkg in "${INTERFACES[@]}"; do sources+=("$SRC/$pkg"); done
if [ -d "$TOOLS_DIR" ]; then
  for pkg in "${TOOL_INTERFACES[@]}"; do [ -d "$TOOLS_DIR/$pkg" ] && sources+=("$TOOLS_DIR/$pkg"); done
fi
for src in "${sources[@]}"; do
  pkg=$(basename "$src")
  stamp="$VENV/.ros-$pkg-stamp"
  kind=msg; [ -d "$src/msg" ] || kind=srv
  want=$( (echo "$pyver $pip_want"; find "$src" -type f | sort | xargs cat; cat scripts/setup_ros.sh) | sha256sum | cut -c1-16)
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && "$VPY" -c "import $pkg.$kind" >/dev/null 2>&1; then
    continue
  fi
  say "generating $pkg with rosidl (cmake; about 30 s)"
  log="$build_root/$pkg.log"
  rm -rf "${build_root:?}/$pkg"
  mkdir -p "$build_root"
  if ! (
    export AMENT_PREFIX_PATH="$prefix${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
    export PATH="$prefix/bin:$PATH"
    cmake -S "$src" -B "$build_root/$pkg" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_INSTALL_PREFIX="$prefix" \
      -DPython3_EXECUTABLE="$prefix/bin/python" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF
    cmake --build "$build_root/$pkg" -j"$jobs"
    cmake --install "$build_root/$pkg"
  ) >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "setup-ros: building $pkg failed (full log: $log)" >&2
    exit 1
  fi
  "$VPY" -c "import $pkg.$kind" || { echo "setup-ros: $pkg built but does not import" >&2; exit 1; }
  rm -rf "${build_root:?}/$pkg"
  echo "$want" > "$stamp"
done
# --- the ROS 2 command-line tools and teleop (test environment; sources beside the checkout) ----------------------
if [ -d "$TOOLS_DIR" ]; then
  tools_stamp="$VENV/.ros-tools-stamp"
  tools_want=$( (echo "$pyver"; for t in "${TOOLS[@]}"; do find "$TOOLS_DIR/$t" -type f -name '*.py' -o -name 'setup.cfg' \
                 | sort | xargs cat; done; cat scripts/setup_ros.sh) | sha256sum | cut -c1-16)
  if [ "$(cat "$tools_stamp" 2>/dev/null)" != "$tools_want" ] || [ ! -x "$VENV/bin/ros2" ]; then
    say "installing the ROS 2 command-line tools and teleop_twist_keyboard from $TOOLS_DIR"
    "$VPY" -m pip install -q --disable-pip-version-check -r "$SRC/requirements-tools.txt"
    for t in "${TOOLS[@]}"; do
      "$VPY" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation "$TOOLS_DIR/$t" \
        || { echo "setup-ros: installing $t from $TOOLS_DIR failed" >&2; exit 1; }
    done
    echo "$tools_want" > "$tools_stamp"
  fi
else
  say "no ROS 2 tool sources at $TOOLS_DIR: ros2 launch/run/topic are not installed (a ROS 2 installation has them)"
fi
bash scripts/ament_register.sh "$VENV"

say "ROS 2 ready ($("$VPY" -c 'import rclpy, importlib.metadata as m; print("rclpy", m.version("ros-rclpy"))'))"
