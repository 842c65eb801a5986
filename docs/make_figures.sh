#!/bin/sh
# Render the README's example figures (docs/plot-*.png) from the 17 robust03 runs: one per plot kind;
# and the recommender walkthrough's (docs/plot-recommender.png) from the bundled examples/recsys.
# Needs matplotlib (pip install '.[plot]' in this checkout) and the shared data ($PREFEVAL_SHARED_DATA,
# else ../shared/data). Figures are written at prefeval's default 200 dpi.
# The images are then reduced to a 128-colour palette with Pillow (installed with matplotlib), which
# keeps each under 130 KB for the repository; prefeval itself writes full-colour PNGs.
set -eu
cd "$(dirname "$0")/.."
data="${PREFEVAL_SHARED_DATA:-../shared/data}/robust03"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

prefeval eval -q -R "$data/qrels.txt" -m rpp,dcgrpp,lexiprecision,lexirecall,ap,ndcg,rr,p@10 \
  "$data"/runs/input.*.gz -o "$work/robust03.prefs.jsonl"
prefeval plot preferences "$work/robust03.prefs.jsonl" -m rpp -o "$work/plot-preferences.png"
prefeval plot orderings "$work/robust03.prefs.jsonl" -o "$work/plot-orderings.png"
prefeval aggregate -P "$work/robust03.prefs.jsonl" -m ap,ndcg,rpp --bootstrap 1000 --seed 1 -n \
  -o "$work/robust03.ranks.jsonl"
prefeval plot ranks "$work/robust03.ranks.jsonl" -o "$work/plot-ranks.png"
prefeval sampled -R "$data/qrels.txt" --num-items 50000 --sample-size 10 --sample-size 100 --sample-size 1000 \
  -m ap,ndcg,rr,r@10,auc "$data"/runs/input.*.gz -o "$work/robust03.sampled.jsonl"
prefeval plot sampled "$work/robust03.sampled.jsonl" -m ap -o "$work/plot-sampled.png"
prefeval null -R "$data/qrels.txt" -m ap,p@10 --seed 1 "$data"/runs/input.*.gz -o "$work/robust03.null.jsonl"
prefeval plot null "$work/robust03.null.jsonl" -m p@10 -o "$work/plot-null.png"
recsys=examples/recsys
prefeval eval -q -R "$recsys/test.qrels" -m ndcg@10,lexiprecision,epc@10,ild@10,catcov@10,provider@10 \
  --train "$recsys/train.tsv" --item-features "$recsys/genres.tsv" --item-groups "$recsys/providers.tsv" \
  "$recsys/popular.run" "$recsys/cooc.run" "$recsys/random.run" -o "$work/recsys.prefs.jsonl"
prefeval plot orderings "$work/recsys.prefs.jsonl" -o "$work/plot-recommender.png"

python - "$work" docs <<'PYTHON'
import sys
from pathlib import Path

from PIL import Image

source, target = map(Path, sys.argv[1:])
for name in ("plot-preferences.png", "plot-orderings.png", "plot-ranks.png", "plot-sampled.png", "plot-null.png",
             "plot-recommender.png"):
    image = Image.open(source / name).convert("RGB").quantize(128, method=Image.Quantize.MEDIANCUT)
    image.save(target / name, optimize=True)
    print(target / name, (target / name).stat().st_size, "bytes")
PYTHON
