#!/bin/sh
# Evaluate the example runs per query, aggregate the preferences (MC4, Borda) and the metrics (mean)
# into system orderings, and print the rank of each run under each ordering as a table.
set -eu
here=$(dirname "$0")
prefeval eval -q --qrels "$here/qrels.txt" "$here/runs/bm25" "$here/runs/dense" "$here/runs/hybrid" "$here/runs/random" \
  | prefeval aggregate -P - -m rpp -m lexirecall -m lexiprecision -m ap -m ndcg --format table
