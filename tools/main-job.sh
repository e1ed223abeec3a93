#!/usr/bin/env bash
# The main job: schd-dbg on the SA8155P under each thread selector, with their tier tables,
# then the selectors side by side over ten seeds (mean, 95% confidence, significance), and the
# comparison as an HTML page. Result files go to results/ (one JSON per selector, the
# comparison's document, and the page).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$root/results"
for selector in fifo ctabs ctabs-nudge; do
  "$root/build/bindersim" run "$root/scenarios/schd-dbg.json" --selector "$selector" \
    --out "$root/results/schd-dbg-$selector.json"
  echo
done
"$root/build/bindersim" compare "$root/scenarios/schd-dbg.json" \
  --selectors fifo,ctabs,ctabs-nudge --seeds 10 --out "$root/results/schd-dbg-compare.json"
"$root/build/bindersim" report "$root/results/schd-dbg-compare.json" \
  -o "$root/results/schd-dbg-report.html"
echo
echo "report: results/schd-dbg-report.html (charts of the comparison; open it in a browser)"
