#!/usr/bin/env bash
# Fills .gpu-deps/ (git-ignored) with the build dependencies that the GPU machine's image lacks,
# copied from THIS machine's Debian packages (scripts/setup.sh installs them), so that a device
# call that carries the folder builds without apt or internet (cmake/CarriedDependencies.cmake,
# bench/cuda_check.sh):
#
#   .gpu-deps/googletest/        GoogleTest sources   (Debian googletest:         /usr/src/googletest)
#   .gpu-deps/include/nlohmann/  nlohmann-json headers (Debian nlohmann-json3-dev: /usr/include/nlohmann)
#   .gpu-deps/include/CLI/       CLI11 headers         (Debian libcli11-dev:       /usr/include/CLI)
#   .gpu-deps/python/            scikit-build-core and nanobind at pyproject.toml's pins, used
#                                on the GPU machine only where its own copies are older (or absent)
#   .gpu-deps/PROVENANCE         package names, versions (dpkg -s) and what was copied
#
# Google Benchmark is not carried (the GPU benchmark does not use it). About 5 MB.
#
#   scripts/gpu-deps.sh [folder]          default .gpu-deps, relative to the repository root
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-.gpu-deps}
rm -rf "$dest"
mkdir -p "$dest/include"
prov="$dest/PROVENANCE"
{
  echo "# Carried build dependencies for a machine without them (scripts/gpu-deps.sh)."
  echo "# Made on $(date -u +%Y-%m-%dT%H:%MZ) from $(. /etc/os-release && echo "$PRETTY_NAME"), $(uname -m)."
} > "$prov"

deb_version() { dpkg-query -W -f='${Package} ${Version} (${Architecture})' "$1"; }

copy_package() {  # package, source path, destination, what
  local package=$1 source=$2 target=$3
  if ! dpkg-query -W "$package" > /dev/null 2>&1 || [[ ! -e $source ]]; then
    echo "gpu-deps.sh: Debian package $package ($source) is missing: scripts/setup.sh installs it" >&2
    exit 1
  fi
  cp -a "$source" "$target"
  echo "$(deb_version "$package"): $source -> ${target#"$dest"/}" >> "$prov"
}
copy_package googletest /usr/src/googletest "$dest/googletest"
copy_package nlohmann-json3-dev /usr/include/nlohmann "$dest/include/nlohmann"
copy_package libcli11-dev /usr/include/CLI "$dest/include/CLI"

# Python build backends at pyproject.toml's build-system pins, each in its own folder
# (.gpu-deps/python/<distribution>/) so that bench/cuda_check.sh can put either one first without
# the other. nanobind (C++ sources + CMake files; CMake finds it through nanobind_ROOT): this
# machine's copy when it has the pinned version, else the PyPI wheel. scikit-build-core (goes on
# PYTHONPATH for the pip build): the PyPI wheels of it and its requirements for the GPU image's
# Python 3.12 (packaging, pathspec), unpacked.
pin() { sed -n "s/.*\"$1==\([0-9.]*\)\".*/\1/p" pyproject.toml | head -1; }
unpack_wheels() {  # folder with wheels/ -> unpacked beside it, provenance lines
  local target=$1 wheel
  for wheel in "$target"/wheels/*.whl; do
    python3 -m zipfile -e "$wheel" "$target"
    echo "python: PyPI wheel $(basename "$wheel") -> ${target#"$dest"/}" >> "$prov"
  done
  rm -rf "$target/wheels"
}
nb_want=$(pin nanobind)
nb_have=$(python3 -c "import importlib.metadata as m; print(m.version('nanobind'))" 2>/dev/null || true)
mkdir -p "$dest/python/nanobind"
if [[ $nb_have == "$nb_want" ]]; then
  src=$(python3 -c "import nanobind, os; print(os.path.dirname(nanobind.__file__))")
  cp -a "$src" "$dest/python/nanobind/nanobind"
  echo "python: nanobind $nb_have installed here: $src -> python/nanobind/nanobind" >> "$prov"
else
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$dest/python/nanobind/wheels" \
    "nanobind==$nb_want"
  unpack_wheels "$dest/python/nanobind"
fi
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  -d "$dest/python/scikit-build-core/wheels" "scikit-build-core==$(pin scikit-build-core)"
unpack_wheels "$dest/python/scikit-build-core"
find "$dest/python" -name __pycache__ -prune -exec rm -rf {} +
du -sh "$dest" | sed 's/^/gpu-deps.sh: /'
cat "$prov"
