#!/bin/sh
# The test job: install what is missing, build with warnings as errors, run every test; then a
# Debug build with AddressSanitizer and UndefinedBehaviorSanitizer runs the host-side tests and a
# small GPU slice (tests/CMakeLists.txt says what runs where; the CMake package test only in the
# first tree). Tests run two at a time: on a fresh machine lavapipe's shader cache is empty, and a
# test process compiles its pipelines on one core, so two processes keep both cores busy (2
# cores, empty cache: the first tree's tests in 643 s against 935 s one at a time).
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Release -DVREN_RADIX_WERROR=ON >/dev/null
cmake --build build-test
(cd build-test && ctest --output-on-failure --timeout 1500 -j2)

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DVREN_RADIX_WERROR=ON -DVREN_RADIX_SANITIZE=ON \
  -DVREN_RADIX_BUILD_BENCH=OFF -DVREN_RADIX_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-asan
(cd build-asan && ctest --output-on-failure --timeout 1500 -j2 -E '^cmake_consumer$')
