#!/bin/sh
# Installs the Debian/Ubuntu packages vren_radix builds and runs with, if any are missing.
set -eu
packages="cmake ninja-build g++ pkg-config python3 libvulkan-dev libvulkan-volk-dev glslang-tools glslang-dev
spirv-tools libbenchmark-dev doctest-dev vulkan-validationlayers mesa-vulkan-drivers"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "Installing:$missing"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
