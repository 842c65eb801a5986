#!/bin/sh
# Evaluate the example runs per query and aggregate the preferences into system orderings.
set -eu
here=$(dirname "$0")
prefeval eval -q --qrels "$here/qrels.txt" "$here/runs/bm25" "$here/runs/dense" "$here/runs/hybrid" "$here/runs/random" \
  | prefeval aggregate -P -
