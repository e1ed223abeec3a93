#!/usr/bin/env bash
# Renders `bindersim report` of a three-selector compare of schd-dbg in headless Chromium and
# checks the result: light and dark screenshots are valid PNGs that are not blank and show the
# report's background and bar colours, and the DOM has one SVG chart per kind with titles,
# labelled axes and every policy (the CPU chart when the results carry per-CPU data), and the
# compare table; then the page of a sweep summary alone (tests/data/sweeps/small-summary.json)
# and its DOM: the sweep's chart, overview and per-point tables.
#
# usage: browser_test.sh <path to bindersim binary> <repo root>
# Without Chromium it exits 77 (skipped), or fails when the environment variable CI is set.
# BINDERSIM_CHROMIUM=PATH uses that browser binary instead of chromium.
# Prints one line per check and a summary "N passed, M failed"; exits non-zero on any failure.
set -u

# shellcheck source-path=SCRIPTDIR source=../cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
init_test 2 "<path to bindersim binary> <repo root>" "$@"
CHECK="$(dirname "${BASH_SOURCE[0]}")/check_render.py"
# CSS pixels of the window: wide enough for the 960-pixel charts, tall enough for the page.
WIDTH=1100
HEIGHT=4400
# The screenshot is taken at half scale, which keeps the PNG decoder in Python fast.
SCALE=0.5

# BINDERSIM_CHROMIUM names another browser binary (default: chromium, then chromium-browser).
browser=""
candidates=(chromium chromium-browser)
[[ -n ${BINDERSIM_CHROMIUM:-} ]] && candidates=("$BINDERSIM_CHROMIUM")
for candidate in "${candidates[@]}"; do
  if command -v "$candidate" >/dev/null 2>&1; then
    browser=$candidate
    break
  fi
done
if [[ -z $browser ]]; then
  if [[ -n ${CI:-} ]]; then
    fail "chromium is installed" "install the Debian package chromium (tools/setup.sh)"
    summary
    exit 1
  fi
  echo "SKIP  chromium is not installed (tools/setup.sh installs it; CI=1 makes this a failure)"
  exit 77
fi

# --- the report ------------------------------------------------------------------------------
run compare "$ROOT/scenarios/schd-dbg.json" --selectors fifo,ctabs,ctabs-nudge --seeds 2 \
  --set clients.0.iterations=200 --out "$TMP/compare.json"
if [[ $rc -ne 0 ]]; then
  fail "compare of three selectors exits 0" "exit $rc: $(cat "$TMP/err")"
  summary
  exit 1
fi
run report "$TMP/compare.json" -o "$TMP/report.html"
if [[ $rc -ne 0 || ! -s "$TMP/report.html" ]]; then
  fail "report exits 0 and writes the page" "exit $rc: $(cat "$TMP/err")"
  summary
  exit 1
fi
pass "report of the compare written ($(wc -c <"$TMP/report.html") bytes)"

# --- render ----------------------------------------------------------------------------------
# A private profile keeps the run independent of the user's; file:// needs no network.
chrome() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --no-first-run --user-data-dir="$TMP/profile" "$@" 2>>"$TMP/chromium.log"
}
URL="file://$TMP/report.html"

check_screenshot() {
  local scheme=$1
  shift
  rm -f "$TMP/$scheme.png"
  chrome --window-size="$WIDTH,$HEIGHT" --force-device-scale-factor="$SCALE" \
    --screenshot="$TMP/$scheme.png" "$@" "$URL" >/dev/null
  if [[ ! -s "$TMP/$scheme.png" ]]; then
    fail "chromium writes a $scheme screenshot" "$(tail -3 "$TMP/chromium.log")"
    return
  fi
  python3 -S "$CHECK" png "$TMP/$scheme.png" "$(python3 -S -c "print(round($WIDTH * $SCALE))")" \
    "$(python3 -S -c "print(round($HEIGHT * $SCALE))")" "$scheme" >"$TMP/checks" 2>&1
  tally "$TMP/checks" $? "the $scheme screenshot checker failed"
}
check_screenshot light
# --force-dark-mode makes prefers-color-scheme match dark.
check_screenshot dark --force-dark-mode

chrome --window-size="$WIDTH,$HEIGHT" --dump-dom "$URL" >"$TMP/dom.html"
if [[ ! -s "$TMP/dom.html" ]]; then
  fail "chromium dumps the DOM" "$(tail -3 "$TMP/chromium.log")"
else
  # Results carry per-CPU data in their optional scheduler object; the page shows the CPU
  # chart exactly when they do.
  cpu=$(python3 -S -c 'import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
print("yes" if all(r["result"].get("scheduler", {}).get("cpu_busy_share") for r in runs) else "no")' \
    "$TMP/compare.json")
  python3 -S "$CHECK" dom "$TMP/dom.html" "$cpu" fifo ctabs ctabs-nudge >"$TMP/checks" 2>&1
  tally "$TMP/checks" $? "the DOM checker failed"
fi

# --- a sweep summary alone -------------------------------------------------------------------
run report "$ROOT/tests/data/sweeps/small-summary.json" -o "$TMP/sweep.html"
if [[ $rc -ne 0 ]]; then
  fail "report of a sweep summary exits 0" "exit $rc: $(cat "$TMP/err")"
else
  chrome --window-size="$WIDTH,$HEIGHT" --dump-dom "file://$TMP/sweep.html" >"$TMP/sweep-dom.html"
  if [[ ! -s "$TMP/sweep-dom.html" ]]; then
    fail "chromium dumps the sweep page's DOM" "$(tail -3 "$TMP/chromium.log")"
  else
    python3 -S "$CHECK" sweep "$TMP/sweep-dom.html" 2 fifo ctabs >"$TMP/checks" 2>&1
    tally "$TMP/checks" $? "the sweep DOM checker failed"
  fi
fi

summary
