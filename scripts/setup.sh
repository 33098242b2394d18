#!/usr/bin/env bash
# Installs what building and testing multigather needs, on Debian 12 (bookworm).
# Packages already present are left alone; missing ones are installed with apt-get at the
# versions pinned below (run as root, or with sudo available). Safe to run repeatedly: when
# nothing is missing it does not touch apt at all.
set -euo pipefail

# package=version (Debian 12). Toolchain packages are skipped when their command exists
# (a CI image may bring its own compiler or cmake).
APT_PACKAGES=(
  g++=4:12.2.0-3
  make=4.3-4.1
  cmake=3.25.1-1
  libgtest-dev=1.12.1-0.2
  libbenchmark-dev=1.7.1-1
  libcli11-dev=2.1.2+ds-1
  nlohmann-json3-dev=3.11.2-2
  librsvg2-bin=2.54.7+dfsg-1~deb12u1   # rsvg-convert: the tests render explain --svg pictures to PNG
  pkg-config=1.8.1-1   # the C API test (c_api_pkg_config) builds a C program through multigather.pc
  curl=7.88.1-10+deb12u15   # scripts/onnxruntime-headers.sh downloads ONNX Runtime's headers (a Debian 13 .deb)
  # The libFuzzer targets (scripts/fuzz.sh): clang 14 and its sanitizer/fuzzer runtimes.
  clang-14=1:14.0.6-12
  libclang-rt-14-dev=1:14.0.6-12
)

declare -A COMMAND_OF=([g++]=g++ [make]=make [cmake]=cmake [librsvg2-bin]=rsvg-convert [clang-14]=clang-14
                       [pkg-config]=pkg-config [curl]=curl)

missing=()
for spec in "${APT_PACKAGES[@]}"; do
  name=${spec%%=*}
  if [[ -n ${COMMAND_OF[$name]:-} ]] && command -v "${COMMAND_OF[$name]}" >/dev/null 2>&1; then
    continue
  fi
  if dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q 'install ok installed'; then
    continue
  fi
  missing+=("$spec")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all build dependencies are installed"
  exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "setup: error: missing packages ${missing[*]}; run as root to install them" >&2
    exit 1
  fi
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
