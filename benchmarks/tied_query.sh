#!/bin/sh
# The memory of --ties expected on one query whose N documents all tie in run A (one in 20 relevant,
# grades 1 to 3) and are ranked without ties in run B (docs/ties.md, "Memory"): wall time and maximum
# resident set size of the RPP measures alone, then of the default list. Usage: sh benchmarks/tied_query.sh N
set -eu
n=${1:-40000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
awk -v n=$n 'BEGIN { srand(1); for (d = 0; d < n; d++) { if (d % 20 == 0) print "q1 0 d" d, 1 + int(rand() * 3) > "qrels";
    print "q1 Q0 d" d, d + 1, 1, "A" > "A"; print "q1 Q0 d" d, d + 1, n - d, "B" > "B" } }'
/usr/bin/time -v prefeval eval -q --jobs 1 --ties expected -m rpp,invrpp,dcgrpp -R qrels A B > /dev/null
/usr/bin/time -v prefeval eval -q --jobs 1 --ties expected --seed 1 -R qrels A B > /dev/null
