#!/bin/sh
# The test job: install what is missing, build with warnings as errors, run every test.
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Release -DVREN_RADIX_WERROR=ON >/dev/null
cmake --build build-test
cd build-test
ctest --output-on-failure --timeout 1500
