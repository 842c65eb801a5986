#!/bin/sh
# Render the README's example figures (docs/plot-*.png) from the 17 robust03 runs.
# Needs prefeval[plot] installed and the shared data ($PREFEVAL_SHARED_DATA, else ../shared/data).
# The images are then reduced to a 128-colour palette with Pillow (installed with matplotlib), which
# keeps them a few tens of KB for the repository; prefeval itself writes full-colour PNGs.
set -eu
cd "$(dirname "$0")/.."
data="${PREFEVAL_SHARED_DATA:-../shared/data}/robust03"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

prefeval eval -q -R "$data/qrels.txt" -m rpp,dcgrpp,lexiprecision,lexirecall,ap,ndcg,rr,p@10 \
  "$data"/runs/input.*.gz -o "$work/robust03.prefs.jsonl"
prefeval plot preferences "$work/robust03.prefs.jsonl" -m rpp -o "$work/plot-preferences.png"
prefeval plot orderings "$work/robust03.prefs.jsonl" -o "$work/plot-orderings.png"

python - "$work" docs <<'PYTHON'
import sys
from pathlib import Path

from PIL import Image

source, target = map(Path, sys.argv[1:])
for name in ("plot-preferences.png", "plot-orderings.png"):
    image = Image.open(source / name).convert("RGB").quantize(128, method=Image.Quantize.MEDIANCUT)
    image.save(target / name, optimize=True)
    print(target / name, (target / name).stat().st_size, "bytes")
PYTHON
