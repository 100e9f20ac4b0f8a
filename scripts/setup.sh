#!/usr/bin/env bash
# Create .venv and install everything mvsim_ros2 needs. Idempotent: does nothing when its inputs are unchanged.
#   PYTHON=python3.12 make setup   -- choose the interpreter (>= 3.10)
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
STAMP="$VENV/.setup-stamp"
PY=${PYTHON:-python3}
APT_LIST=scripts/apt-packages.txt

inputs_hash() {
  { cat setup.py package.xml scripts/setup.sh scripts/setup_ros.sh scripts/ament_register.sh "$APT_LIST"; ls ../shared/third_party/ros2 2>/dev/null; find scripts/ros_interfaces -type f | sort | xargs cat;
    echo "ROS_DISTRO=${ROS_DISTRO:-} MVSIM_SKIP_ROS=${MVSIM_SKIP_ROS:-0}"; } 2>/dev/null | sha256sum | cut -c1-16; }
want=$(inputs_hash)
# the package's kernels compiled ahead of time (mvsim_core/aot.py), again whenever the sources changed since
aot_build() { "$VENV/bin/python" -m mvsim_core.aot --if-stale; }
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -x "$VENV/bin/python" ]; then
  aot_build
  exit 0
fi

# --- system packages (Debian/Ubuntu) -------------------------------------------------------------------------------
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  while read -r pkg; do
    [ -z "$pkg" ] && continue
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done < <(sed -e 's/#.*//' -e '/^\s*$/d' "$APT_LIST")
fi
if ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then missing+=(python3-venv); fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing system packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: please install these system packages first (as root): apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

# --- Python ---------------------------------------------------------------------------------------------------------
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' || {
  echo "setup: Python >= 3.10 is needed; set PYTHON=/path/to/python3.x" >&2; exit 1; }
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[test,plot,gym,sweep]"
# ROS 2 for the bridge node: the system's when sourced, else PyPI wheels + generated tf2_msgs/ackermann_msgs
VENV="$VENV" bash scripts/setup_ros.sh
inputs_hash > "$STAMP"
aot_build
echo "setup: done ($("$VENV/bin/python" --version))"
