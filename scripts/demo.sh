#!/bin/sh
# The main job: install what is missing, build, and sort a few million keys on the chosen device.
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
./build/vren-radix info
./build/vren-radix demo "$@"
