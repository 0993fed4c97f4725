#!/usr/bin/env bash
# bench.sh: Eddy and a real redis-server side by side, the same
# redis-benchmark loads on each in turn (alternating, ROUNDS rounds), the
# median throughput of each and the Eddy/Redis ratio per load. Results are
# printed as a table and written as JSON under bench/results/.
#
# Environment: ROUNDS (default 5), REQUESTS (default 100000), CLIENTS (50),
# EDDY (path of the binary, default bin/eddy).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
REQUESTS=${REQUESTS:-100000}
CLIENTS=${CLIENTS:-50}
EDDY=${EDDY:-bin/eddy}
for tool in redis-server redis-benchmark redis-cli; do
	command -v "$tool" >/dev/null || { echo "bench: $tool not found (apt-get install redis-server redis-tools)" >&2; exit 1; }
done
[ -x "$EDDY" ] || { echo "bench: $EDDY not built (make build)" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_ping() {
	for _ in $(seq 1 200); do
		redis-cli -p "$1" PING 2>/dev/null | grep -q PONG && return 0
		sleep 0.05
	done
	echo "bench: server on port $1 did not answer PING" >&2
	return 1
}

rport=$(free_port)
mkdir -p "$work/redis" "$work/eddy"
redis-server --port "$rport" --bind 127.0.0.1 --dir "$work/redis" --save '' \
	--appendonly yes --appendfsync everysec --daemonize no >"$work/redis.log" 2>&1 &
pids+=($!)
eport=$(free_port)
"$EDDY" server --port "$eport" --dir "$work/eddy" --appendfsync everysec >"$work/eddy.log" 2>&1 &
pids+=($!)
wait_ping "$rport"
wait_ping "$eport"

# Each load: a name and the redis-benchmark arguments after -p.
loads=(
	"PING|PING"
	"XADD|XADD bench:s * f v"
	"XADD -P 16|-P 16 XADD bench:p * f v"
	"XRANGE COUNT 10|XRANGE bench:s - + COUNT 10"
	"XLEN|XLEN bench:s"
)

rps() { # port, args...
	local port=$1
	shift
	redis-benchmark -p "$port" -c "$CLIENTS" -n "$REQUESTS" --csv "$@" 2>/dev/null |
		awk -F'","' 'NR==2 {print $2}'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
json="bench/results/$(date -u +%Y%m%dT%H%M%SZ).json"
printf '%-18s %12s %12s %8s\n' load redis_rps eddy_rps ratio
echo "{\"date\":\"$stamp\",\"rounds\":$ROUNDS,\"requests\":$REQUESTS,\"clients\":$CLIENTS,\"cpus\":$(nproc),\"loads\":[" >"$json"
first=1
for l in "${loads[@]}"; do
	name=${l%%|*}
	read -r -a args <<<"${l#*|}"
	r=() e=()
	for _ in $(seq 1 "$ROUNDS"); do
		r+=("$(rps "$rport" "${args[@]}")")
		e+=("$(rps "$eport" "${args[@]}")")
	done
	rm=$(printf '%s\n' "${r[@]}" | median)
	em=$(printf '%s\n' "${e[@]}" | median)
	ratio=$(awk -v a="$em" -v b="$rm" 'BEGIN {printf "%.2f", (b>0 ? a/b : 0)}')
	printf '%-18s %12.0f %12.0f %8s\n' "$name" "$rm" "$em" "$ratio"
	[ $first = 1 ] || echo "," >>"$json"
	first=0
	printf '{"load":"%s","redis_rps":%s,"eddy_rps":%s,"ratio":%s}' "$name" "$rm" "$em" "$ratio" >>"$json"
done
echo "]}" >>"$json"
echo "results: $json"
