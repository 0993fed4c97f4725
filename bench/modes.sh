#!/usr/bin/env bash
# modes.sh: Redis (AOF everysec) against Eddy serving its clients with a
# goroutine each (event-loop no) and with the event loop (the default), the
# same binary, in one run: rounds alternate the order of the three, and the
# medians are printed with the ratio to Redis (bench/results/HISTORY.md,
# "The network path: one event loop").
#
# Environment: ROUNDS (5), REQUESTS (100000 per round), CLIENTS (50), EDDY
# (default bin/eddy), TESTS (comma-separated redis-benchmark arguments,
# default PING, XADD, XLEN, XRANGE COUNT 10 and XADD -P 16), ALWAYS=1 (all
# three with appendfsync always).
set -euo pipefail
set -f
rounds=${ROUNDS:-5} n=${REQUESTS:-100000} clients=${CLIENTS:-50} eddy=${EDDY:-bin/eddy}
tests=${TESTS:-PING,XADD s * f v,XLEN s,XRANGE s - + COUNT 10,-P 16 XADD s * f v}
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
rport=$(free_port) gport=$(free_port) lport=$(free_port)
mkdir -p "$work/redis" "$work/goroutines" "$work/loop"
start_redis "$rport" "$work/redis" everysec /dev/null
pids+=($!)
"$eddy" server --port "$gport" --dir "$work/goroutines" --nats-port -1 --event-loop no >/dev/null 2>&1 &
pids+=($!)
"$eddy" server --port "$lport" --dir "$work/loop" --nats-port -1 >/dev/null 2>&1 &
pids+=($!)
for p in $rport $gport $lport; do
	wait_ping "$p"
	if [ -n "${ALWAYS:-}" ]; then redis-cli -p "$p" CONFIG SET appendfsync always >/dev/null; fi
	# XLEN and XRANGE read a stream of 200,000 entries.
	redis-benchmark -p "$p" -c "$clients" -n 200000 -P 16 XADD s '*' f v >/dev/null 2>&1
done

words() { tr ' ' '\n' <<<"$1" | grep -v '^$'; }
printf '%-24s %10s %18s %18s   p99 ms redis / goroutines / loop\n' load redis goroutines loop
IFS=,
for t in $tests; do
	IFS=$' \t\n'
	declare -A rps=() p99=()
	for r in $(seq "$rounds"); do
		order="redis:$rport goroutines:$gport loop:$lport"
		[ $((r % 2)) = 0 ] && order="loop:$lport goroutines:$gport redis:$rport"
		for s in $order; do
			name=${s%%:*} port=${s##*:}
			# shellcheck disable=SC2086 # t holds the benchmark's arguments
			line=$(bench_rps "$port" "$clients" "$n" $t | awk '{print int($1), $2}')
			rps[$name]="${rps[$name]:-} ${line% *}"
			p99[$name]="${p99[$name]:-} ${line#* }"
		done
	done
	mr=$(words "${rps[redis]}" | median) mg=$(words "${rps[goroutines]}" | median) ml=$(words "${rps[loop]}" | median)
	printf '%-24s %10s %10s (%4.2f) %10s (%4.2f)   %s / %s / %s\n' "$t" "$mr" "$mg" "$(echo "$mg/$mr" | bc -l)" "$ml" "$(echo "$ml/$mr" | bc -l)" \
		"$(words "${p99[redis]}" | median)" "$(words "${p99[goroutines]}" | median)" "$(words "${p99[loop]}" | median)"
	IFS=,
done
