#!/usr/bin/env bash
# ONNX Runtime's C / C++ API headers, for the custom-op library libmultigather_onnxruntime
# (docs/onnx_runtime_library.md). No PyPI package ships them and Debian 12 has no onnxruntime;
# Debian 13 (trixie) packages them as libonnxruntime-dev. This script downloads that one pinned
# .deb from Debian's archive (checked against its SHA-256 from trixie's Packages index), unpacks
# its usr/include/onnxruntime into .deps/onnxruntime-VERSION/include (git-ignored; nothing is
# installed system-wide, nothing of it is committed) and prints that folder. The library needs
# only the C API's declarations: it never links onnxruntime (the API comes from the runtime that
# loads it), so headers of API 21 work with the pinned onnxruntime 1.31.1, which serves older
# API versions too.
#
#   scripts/onnxruntime-headers.sh   -> prints the include folder (python/CMakeLists.txt finds it)
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=1.21.0+dfsg-1
SHA256=14f7d959d5deacbcf1504830d4189f91fc67382b399ed9ae9d3aa9c4050ced08
DEB=libonnxruntime-dev_${VERSION}_amd64.deb
URL=${MULTIGATHER_DEBIAN_MIRROR:-http://deb.debian.org/debian}/pool/main/o/onnxruntime/$DEB
DEST=.deps/onnxruntime-${VERSION%%+*}
if [ ! -f "$DEST/include/onnxruntime_c_api.h" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  curl -fsSL --retry 3 -o "$tmp/$DEB" "$URL"
  echo "$SHA256  $tmp/$DEB" | sha256sum -c --quiet -
  dpkg-deb -x "$tmp/$DEB" "$tmp/root"
  rm -rf "$DEST"
  mkdir -p "$DEST"
  cp -r "$tmp/root/usr/include/onnxruntime" "$DEST/include"
  cp "$tmp/root/usr/share/doc/libonnxruntime-dev/copyright" "$DEST/copyright" 2>/dev/null || true
fi
echo "$(pwd)/$DEST/include"
