#!/bin/sh
# The test job: install what is missing, build with warnings as errors, run every test; then a
# Debug build with AddressSanitizer and UndefinedBehaviorSanitizer runs the host-side tests and a
# small GPU slice (tests/CMakeLists.txt says what runs where; the CMake package test only in the
# first tree).
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Release -DVREN_RADIX_WERROR=ON >/dev/null
cmake --build build-test
(cd build-test && ctest --output-on-failure --timeout 1500)

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DVREN_RADIX_WERROR=ON -DVREN_RADIX_SANITIZE=ON \
  -DVREN_RADIX_BUILD_BENCH=OFF -DVREN_RADIX_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-asan
(cd build-asan && ctest --output-on-failure --timeout 1500 -E '^cmake_consumer$')
