#!/usr/bin/env bash
# The README's main job: generate a biased graph, load it into an embedded
# Pebble store and print its statistics. Usage: scripts/demo.sh BIN DIR
set -euo pipefail
bin=${1:-bin/fasd}
dir=${2:-demo-db}
rm -rf "$dir"
mkdir -p "$dir"
"$bin" gen --out "$dir/dump"
"$bin" load --db "$dir/store" --preset synth --dir "$dir/dump"
"$bin" stats --db "$dir/store"
