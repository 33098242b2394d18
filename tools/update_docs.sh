#!/bin/sh
# Regenerates the documents that list the registry's ops, from the registry itself:
#   docs/quick_reference.md                     `multigather ops --format=reference`
#   docs/cli.md's table in "### Framework ops"  `multigather ops --format=md` (that table only)
# Usage: tools/update_docs.sh [path/to/multigather]   (default: build/multigather)
# tests/cli_docs_test.cpp (CTest) fails when either document differs from what the registry
# generates; run this script after changing a registry row, and commit the result.
set -eu
cd "$(dirname "$0")/.."
tool=${1:-build/multigather}
if [ ! -x "$tool" ]; then
  echo "tools/update_docs.sh: $tool is not an executable; build it first or pass its path" >&2
  exit 2
fi

"$tool" ops --format=reference > docs/quick_reference.md.tmp
mv docs/quick_reference.md.tmp docs/quick_reference.md

# docs/cli.md's table is the first run of '|' lines after the "### Framework ops" heading that
# starts with the header "| class | ops | flags |"; only those lines are replaced.
table=$(mktemp)
trap 'rm -f "$table" docs/cli.md.tmp' EXIT
"$tool" ops --format=md > "$table"
awk -v table="$table" '
  /^### / { in_section = ($0 == "### Framework ops") }
  in_section && !done && $0 == "| class | ops | flags |" {
    while ((getline line < table) > 0) print line
    done = 1; skipping = 1; next
  }
  skipping && /^\|/ { next }
  { skipping = 0; print }
  END { if (!done) { print "tools/update_docs.sh: no \"| class | ops | flags |\" table under ### Framework ops in docs/cli.md" > "/dev/stderr"; exit 1 } }
' docs/cli.md > docs/cli.md.tmp
cat docs/cli.md.tmp > docs/cli.md
echo "updated docs/quick_reference.md and the op table of docs/cli.md"
