#!/bin/sh
# Builds tests/consumer both ways a user would and runs it: against an install prefix
# (cmake --install, then find_package with CMAKE_PREFIX_PATH) and through add_subdirectory of
# the source tree. Usage: consumer_test.sh SOURCE_DIR WORK_DIR [CMAKE_ARGS...]
# WORK_DIR is emptied first; CMAKE_ARGS (compilers, -DVREN_RADIX_WERROR=ON) go to every configure.
set -eu
src=$(cd "$1" && pwd)
work=$2
shift 2
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix

step() { echo "consumer_test: $*"; }
fail() {
  echo "consumer_test: $*" >&2
  exit 1
}

step "build and install the library and the CLI into $prefix"
cmake -S "$src" -B "$work/lib" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DVREN_RADIX_BUILD_TESTS=OFF -DVREN_RADIX_BUILD_BENCH=OFF -DVREN_RADIX_BUILD_EXAMPLES=OFF \
  -DVREN_RADIX_BUILD_CLI=ON "$@" >/dev/null
cmake --build "$work/lib"
cmake --install "$work/lib" >/dev/null
"$prefix/bin/vren-radix" --version
if grep -rl -e "$src" -e "$work/lib" "$prefix"; then fail "the installed files above name the source or build tree"; fi

step "find_package(vren_radix) from the prefix"
cmake -S "$src/tests/consumer" -B "$work/installed" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" "$@" >/dev/null
cmake --build "$work/installed"
"$work/installed/consumer"

step "find_package(vren_radix) refuses a volk.h of another version"
volk_dir=$(sed -n 's/^VREN_RADIX_VOLK_INCLUDE_DIR:PATH=//p' "$work/installed/CMakeCache.txt")
mkdir -p "$work/other-volk"
sed 's/^#define VOLK_HEADER_VERSION [0-9]*/#define VOLK_HEADER_VERSION 1/' "$volk_dir/volk.h" >"$work/other-volk/volk.h"
if cmake -S "$src/tests/consumer" -B "$work/other-volk/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
     -DVREN_RADIX_VOLK_INCLUDE_DIR="$work/other-volk" "$@" >"$work/other-volk/log" 2>&1; then
  fail "find_package accepted a volk.h of version 1"
fi
if ! grep -q "was built with volk.h version" "$work/other-volk/log"; then
  cat "$work/other-volk/log" >&2
  fail "find_package failed without saying which volk.h version it needs"
fi

step "add_subdirectory of $src"
cmake -S "$src/tests/consumer" -B "$work/subdirectory" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DVREN_RADIX_SOURCE_DIR="$src" "$@" >/dev/null
cmake --build "$work/subdirectory"
if [ -e "$work/subdirectory/vren_radix/tests" ] || [ -e "$work/subdirectory/vren_radix/vren-radix" ]; then
  fail "as a subproject, vren_radix built its tests or CLI; they must default to OFF"
fi
"$work/subdirectory/consumer"
step "both builds sorted"
