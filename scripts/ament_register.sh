#!/usr/bin/env bash
# Register this checkout as the ROS 2 package mvsim_ros2 in an ament prefix (default .venv), the layout that
# `colcon build` produces, with symbolic links so that edits in the checkout take effect at once:
#   PREFIX/share/ament_index/resource_index/packages/mvsim_ros2
#   PREFIX/share/mvsim_ros2/{package.xml,launch,config,rviz,worlds}: real folders whose files link to the checkout's
#   (ros2 launch looks for launch files with os.walk, which does not enter linked folders)
#   PREFIX/lib/mvsim_ros2/mvsim_node -> PREFIX/bin/mvsim_node (what `ros2 run mvsim_ros2 mvsim_node` looks for)
# Tools installed with pip put their executables in PREFIX/bin; the ones `ros2 run` starts get the same link
# (teleop_twist_keyboard). A .pth file puts PREFIX on AMENT_PREFIX_PATH for every program of the venv's interpreter
# (the wheels set no environment), so `PREFIX/bin/ros2 launch mvsim_ros2 demo.launch.py` works from the checkout
# with nothing sourced.
# Idempotent; called by scripts/setup_ros.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=$(cd "${1:-.venv}" && pwd)
PKG=mvsim_ros2
checkout=$(pwd)

mkdir -p "$PREFIX/share/ament_index/resource_index/packages" "$PREFIX/share/$PKG" "$PREFIX/lib/$PKG"
: > "$PREFIX/share/ament_index/resource_index/packages/$PKG"
ln -sfn "$checkout/package.xml" "$PREFIX/share/$PKG/package.xml"
for item in launch config rviz worlds; do
  rm -rf "${PREFIX:?}/share/$PKG/$item"
  cp -rs "$checkout/$item" "$PREFIX/share/$PKG/$item"
done
[ -x "$PREFIX/bin/mvsim_node" ] && ln -sfn "$PREFIX/bin/mvsim_node" "$PREFIX/lib/$PKG/mvsim_node"
for tool in teleop_twist_keyboard; do
  if [ -x "$PREFIX/bin/$tool" ]; then
    mkdir -p "$PREFIX/lib/$tool"
    ln -sfn "$PREFIX/bin/$tool" "$PREFIX/lib/$tool/$tool"
  fi
done
site=$("$PREFIX/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cat > "$site/mvsim_ament_prefix.pth" <<'PTH'
import os, sys; _p = os.environ.get("AMENT_PREFIX_PATH", ""); sys.prefix in _p.split(os.pathsep) or os.environ.__setitem__("AMENT_PREFIX_PATH", os.pathsep.join(filter(None, [_p, sys.prefix])))
PTH
exit 0
