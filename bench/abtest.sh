#!/usr/bin/env bash
# abtest.sh: two or more Eddy builds side by side under one redis-benchmark
# load, to tell whether a change moved it. Each build runs as its own
# server, all started at once; every round runs the load on each in turn,
# the order rotating from round to round, and the figure for each build
# after the first is the geometric mean of its per-round ratios to the
# first build's, with how many rounds it won.
#
# Why not medians of a few long rounds: on a shared 2-CPU machine one
# build's rounds spread so widely that a few long rounds could show a gain
# that many short ones, compared round by round, did not
# (bench/results/HISTORY.md, "How the benchmarks were run"). Take many
# short rounds.
#
# Each run waits until the other servers are quiet (lib.sh's wait_quiet):
# without it, Eddy's flushes and compactions after its own run landed in
# the next server's, and under XADD -P 16 the build listed second beat a
# copy of itself. Even so, take several runs (RUNS), each with the builds
# in another order.
#
# Usage: bench/abtest.sh BIN BIN [BIN...] -- redis-benchmark arguments
#   e.g. bench/abtest.sh /tmp/eddy-base bin/eddy -- XADD s '*' f v
# The word redis in place of a BIN is a real redis-server, with its AOF
# synced as FSYNC says (as make bench starts it): bench/abtest.sh redis
# bin/eddy -- ... gives Eddy/Redis round by round.
# Environment: ROUNDS (30), REQUESTS (30000 per round), CLIENTS (50),
# FSYNC (everysec; always for appendfsync always on every server), RUNS
# (1): RUNS runs of ROUNDS rounds each, every run on fresh servers and
# with the order of the builds rotated, their rounds pooled (as the
# many runs in make bench: RUNS=6 ROUNDS=4 REQUESTS=100000), WARM (0):
# pipelined XADDs each server takes before the first round.
set -euo pipefail
set -f
rounds=${ROUNDS:-30} runs=${RUNS:-1} warm=${WARM:-0} n=${REQUESTS:-30000} clients=${CLIENTS:-50} fsync=${FSYNC:-everysec}
bins=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	bins+=("$1")
	shift
done
if [ $# -eq 0 ] || [ ${#bins[@]} -lt 2 ]; then
	echo "usage: $0 BIN BIN [BIN...] -- redis-benchmark arguments" >&2
	exit 2
fi
shift
load=("$@")
[ ${#load[@]} -gt 0 ] || { echo "abtest: no load after --" >&2; exit 2; }
for b in "${bins[@]}"; do
	[ "$b" = redis ] || [ -x "$b" ] || { echo "abtest: $b is not executable" >&2; exit 1; }
done

work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

k=${#bins[@]}
# One line per round and build in $work/rounds: run*rounds+round, build
# index, rps, p99 ms. Each run starts fresh servers, in an order rotated
# from the run before (run r starts build r%k first and runs it first in
# its first round), and stops them at its end.
for ((run = 0; run < runs; run++)); do
	pids=() ports=()
	for ((j = 0; j < k; j++)); do
		i=$(((j + run) % k))
		p=$(free_port)
		mkdir -p "$work/$run.$i"
		if [ "${bins[$i]}" = redis ]; then
			start_redis "$p" "$work/$run.$i" "$fsync" "$work/$run.$i.log"
		else
			"${bins[$i]}" server --port "$p" --dir "$work/$run.$i" --nats-port -1 --appendfsync "$fsync" >"$work/$run.$i.log" 2>&1 &
		fi
		pids[$i]=$!
		ports[$i]=$p
	done
	for p in "${ports[@]}"; do wait_ping "$p"; done
	if [ "$warm" -gt 0 ]; then
		# Servers as users run them hold data: a fresh Redis has an empty
		# AOF, a fresh Eddy a store whose first logs and tables are new.
		for ((i = 0; i < k; i++)); do
			redis-benchmark -p "${ports[$i]}" -c "$clients" -n "$warm" -P 16 -q XADD abtest:warm '*' f v >/dev/null 2>&1
		done
	fi
	for ((r = 0; r < rounds; r++)); do
		for ((j = 0; j < k; j++)); do
			i=$(((j + r + run) % k))
			others=()
			for ((o = 0; o < k; o++)); do [ $o = $i ] || others+=("${pids[$o]}"); done
			wait_quiet "${others[@]}"
			bench_rps "${ports[$i]}" "$clients" "$n" "${load[@]}" |
				awk -v r="$((run * rounds + r))" -v i="$i" '{print r, i, $1, $2}' >>"$work/rounds"
		done
	done
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	pids=()
	rm -rf "$work"/"$run".*
done

echo "load: ${load[*]}  ($runs run(s) of $rounds rounds of $n, $clients clients, appendfsync $fsync, $warm XADDs of warm-up)"
# Each build's median rps over its rounds (lib.sh's median).
meds=$(for ((i = 0; i < k; i++)); do awk -v i="$i" '$2 == i && $3 > 0 {print $3}' "$work/rounds" | median; done | paste -sd' ')
awk -v k="$k" -v meds="$meds" -v per="$rounds" -v runs="$runs" '
	{ rps[$1, $2] = $3; p99[$1, $2] = $4; if ($1 + 1 > nr) nr = $1 + 1 }
	END {
		split(meds, m, " ")
		for (i = 0; i < k; i++) {
			n = 0; lr = 0; lp = 0; wins = 0
			for (r = 0; r < nr; r++) {
				if (!((r, i) in rps) || !((r, 0) in rps) || rps[r, 0] <= 0 || p99[r, 0] <= 0) continue
				n++
				lr += log(rps[r, i] / rps[r, 0]); lp += log(p99[r, i] / p99[r, 0])
				if (rps[r, i] > rps[r, 0]) wins++
				rn = int(r / per); pr[rn] += log(rps[r, i] / rps[r, 0]); pn[rn]++
			}
			med = m[i + 1]
			if (i == 0) printf "build 0: median %.0f rps (the base)\n", med
			else printf "build %d: median %.0f rps; against build 0, round by round: rps x%.3f (won %d of %d), p99 x%.3f\n", i, med, exp(lr / n), wins, n, exp(lp / n)
			if (i > 0 && runs > 1) {
				line = ""
				for (rn = 0; rn < runs; rn++) if (pn[rn] > 0) line = line sprintf(" %.3f", exp(pr[rn] / pn[rn]))
				printf "  per run:%s\n", line
			}
			delete pr; delete pn
		}
	}' "$work/rounds"
for i in "${!bins[@]}"; do echo "build $i: ${bins[$i]}"; done
