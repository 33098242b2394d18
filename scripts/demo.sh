#!/usr/bin/env bash
# A newcomer's first command: installs the build dependencies (scripts/setup.sh), builds the
# `multigather` tool into build/multigather, and runs it on the shipped examples (examples/*.npy).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake -S . -B build
cmake --build build --target multigather_tool -j "$(nproc)"

show() {
  echo
  echo "\$ $*"
  "$@"
}
# GatherElements along axis 0 (numpy.take_along_axis): the README's first example.
show build/multigather run gather_multiaxis --input examples/elements_axis0/input.npy \
  --indices examples/elements_axis0/indices.npy --axes=0
# (x, y) coordinates into a batch of images: two axes, given in the order 2,1.
show build/multigather run gather_multiaxis --input examples/points_xy/input.npy \
  --indices examples/points_xy/indices.npy --axes=2,1
# Shapes only: what the operator does for the seed's example.
show build/multigather explain gather_multiaxis --input-shape=4,2,1,2 --indices-shape=1,3,2,2 --axes=1
