#!/usr/bin/env bash
# bench-scaleout.sh — throughput of one run on 1, 2 and 4 worker processes
# (evalflow run -workers N: an embedded NATS JetStream server and N worker
# children on this machine) against the same run in one process, end to
# end through the CLI: durable output, the stage cache on and cold. It
# prints items/s and the ratio to the local run, and always exits 0.
#
#   bash scripts/bench-scaleout.sh
#   BENCH_ROUNDS=3 BENCH_SCALE_WORKERS="1 2 4" bash scripts/bench-scaleout.sh
#   BENCH_ONLY=scoring bash scripts/bench-scaleout.sh     # scoring | llm
#
# Workloads:
#   scoring  text2sql-replay.hcl, compare=testsuite, on BENCH_SCALE_N (20,000)
#            GeoQuery items whose query texts are all distinct
#            (internal/bench/gen -kind geo): CPU-bound test-suite execution
#            match. On this 2-core machine more than two processes share two
#            cores, so the ceiling is about 2× a single process's core.
#   llm      internal/bench/testdata/llm.hcl against internal/bench/fakellm
#            (200 ms per call, cache off, every prompt distinct), the generate
#            stage's pool c = BENCH_SCALE_C (64) per process and shard, the
#            model's max_concurrency BENCH_SCALE_CAP (256) over all workers
#            together: the local run keeps c calls in flight (c/0.2 s items/s);
#            each worker runs -worker-slots 2 shards at once, so N workers keep
#            up to 2·N·c in flight until the shared cap holds them.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GEO=${BENCH_GEO:-$ROOT/../shared/data/geoquery}
ROUNDS=${BENCH_ROUNDS:-1}
ONLY=${BENCH_ONLY:-scoring llm}
WORKERS=${BENCH_SCALE_WORKERS:-1 2 4}
N=${BENCH_SCALE_N:-20000}
C=${BENCH_SCALE_C:-64}
CAP=${BENCH_SCALE_CAP:-256}
LLM_N=${BENCH_SCALE_LLM_N:-6400}
GO=${GO:-go}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/evalflow-bench-scaleout.XXXXXX")
FAKEPID=
cleanup() {
	[ -n "$FAKEPID" ] && kill "$FAKEPID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
BIN=$WORK/bin
mkdir -p "$BIN"

want() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
wall_of() { awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,p,":"); s=0; for(i=1;i<=n;i++) s=s*60+p[i]; printf "%.3f\n", s}' "$1"; }
# timed FILE CMD...: CMD under /usr/bin/time -v (report in FILE, output in FILE.out).
timed() {
	local f=$1
	shift
	/usr/bin/time -v -o "$f" "$@" >"$f.out" 2>&1
	local rc=$?
	[ $rc -ne 0 ] && { echo "  ! exit $rc: $*" >&2; tail -5 "$f.out" >&2; }
	return 0
}

echo "== evalflow bench-scaleout  ($(nproc) cores, $($GO version | cut -d' ' -f3), load $(cut -d' ' -f1-3 /proc/loadavg)), rounds $ROUNDS"
(cd "$ROOT" && $GO build -o "$BIN/evalflow" ./cmd/evalflow && $GO build -o "$BIN/gen" ./internal/bench/gen &&
	$GO build -o "$BIN/fakellm" ./internal/bench/fakellm) || { echo "build failed"; exit 0; }
EF=$BIN/evalflow
declare -a SUMMARY

# measure LABEL ITEMS CMD...: ROUNDS runs of CMD; the median items/s in RATE.
measure() {
	local label=$1 items=$2
	shift 2
	local rates=()
	for r in $(seq "$ROUNDS"); do
		rm -rf "$WORK/run"
		EVALFLOW_CACHE_DIR=$(mktemp -d "$WORK/cache.XXXXXX") OPENAI_API_KEY=bench timed "$WORK/t" "$@" -quiet -out "$WORK/run"
		local w
		w=$(wall_of "$WORK/t")
		rates+=("$(awk -v n="$items" -v w="$w" 'BEGIN{printf "%.0f", n/w}')")
		grep -m1 '^ *ex ' "$WORK/t.out" | sed "s/^ */     $label round $r: /"
	done
	RATE=$(printf '%s\n' "${rates[@]}" | median)
}

report() { # report LABEL LOCALRATE: the last measure's RATE against the local run's
	local label=$1 base=$2
	line=$(printf '%-10s %-10s %8s items/s  (x%s of local)' "$WL" "$label" "$RATE" "$(awk -v a="$RATE" -v b="$base" 'BEGIN{printf "%.2f", a/b}')")
	echo "   $line"
	SUMMARY+=("$line")
}

if want scoring; then
	if [ ! -f "$GEO/conformance/items.jsonl" ]; then
		echo "-- scoring: skipped ($GEO/conformance/items.jsonl not found; set BENCH_GEO)"
	else
		WL=scoring
		echo "-- scoring: $N GeoQuery items, all query texts distinct, compare=testsuite"
		D=$WORK/geo
		"$BIN/gen" -kind geo -n "$N" -out "$D" -geo "$GEO/conformance/items.jsonl" >/dev/null || exit 0
		args=(run "$ROOT/pipelines/text2sql-replay.hcl" -var dataset="$D/items.jsonl" -var predictions="$D/preds.jsonl"
			-var databases="$GEO" -var compare=testsuite)
		measure local "$N" "$EF" "${args[@]}"
		LOCAL=$RATE
		report local "$LOCAL"
		for w in $WORKERS; do
			measure "$w-workers" "$N" "$EF" "${args[@]}" -workers "$w"
			report "$w workers" "$LOCAL"
		done
	fi
fi

if want llm; then
	WL=llm
	echo "-- llm: $LLM_N items, fake endpoint 200 ms, stage pool c=$C per process and shard, shared max_concurrency $CAP"
	"$BIN/fakellm" -latency 200ms -url-file "$WORK/url" 2>"$WORK/fakellm.log" &
	FAKEPID=$!
	for _ in $(seq 50); do [ -s "$WORK/url" ] && break; sleep 0.1; done
	URL=$(cat "$WORK/url")
	D=$WORK/llm
	"$BIN/gen" -kind llm -n "$LLM_N" -out "$D" >/dev/null || exit 0
	args=(run "$ROOT/internal/bench/testdata/llm.hcl" -var dir="$D" -var base_url="$URL" -var c="$C" -var cap="$CAP")
	measure local "$LLM_N" "$EF" "${args[@]}"
	LOCAL=$RATE
	report local "$LOCAL"
	for w in $WORKERS; do
		measure "$w-workers" "$LLM_N" "$EF" "${args[@]}" -workers "$w"
		report "$w workers" "$LOCAL"
	done
	echo "   (ideal: local c/0.2 s = $((C * 5)) items/s; the shared cap $CAP allows at most $((CAP * 5)) items/s over all workers)"
fi

echo
echo "== summary (median of $ROUNDS rounds)"
for l in "${SUMMARY[@]}"; do echo "   $l"; done
exit 0
