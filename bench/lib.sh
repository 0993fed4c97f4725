# lib.sh: helpers shared by bench.sh, modes.sh and abtest.sh (sourced, not run).

# free_port prints a TCP port free on 127.0.0.1.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# wait_ping waits up to 10 s for the server on port $1 to answer PING.
wait_ping() {
	for _ in $(seq 1 200); do
		redis-cli -p "$1" PING 2>/dev/null | grep -q PONG && return 0
		sleep 0.05
	done
	echo "bench: server on port $1 did not answer PING" >&2
	return 1
}

# cpu_ns prints the CPU time, in nanoseconds, that the processes $@ and
# their children (Redis's AOF rewrite, say) have used so far: the sum of
# every thread's /proc/<pid>/task/<tid>/schedstat.
cpu_ns() {
	local p c all=()
	for p in "$@"; do
		all+=("$p")
		for c in $(cat /proc/"$p"/task/*/children 2>/dev/null || true); do all+=("$c"); done
	done
	for p in "${all[@]}"; do cat /proc/"$p"/task/*/schedstat 2>/dev/null || true; done |
		awk '{s += $1} END {printf "%.0f\n", s}'
}

# wait_quiet waits until the processes $@ use less than 5 ms of CPU in
# 100 ms, for at most 30 s. A side-by-side round runs one server while
# the others wait: what one server still does after its own run (Eddy's
# flushes and compactions) must not land in the next server's run. It
# did, before 2026-12-02 13:00: with two identical Eddy builds, the
# second listed ran XADD -P 16 faster than the first in every one of a
# dozen runs (bench/results/HISTORY.md, "How the benchmarks were run").
wait_quiet() {
	[ $# -gt 0 ] || return 0
	local a b i
	a=$(cpu_ns "$@")
	for ((i = 0; i < 300; i++)); do
		sleep 0.1
		b=$(cpu_ns "$@")
		if [ $((b - a)) -lt 5000000 ]; then return 0; fi
		a=$b
	done
	echo "bench: processes $* still busy after 30 s; going on" >&2
}

# median prints the median of the numbers on stdin, one per line.
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# start_redis starts, in the background, a redis-server on port $1 with
# its files in $2 and its AOF synced as $3 says (everysec, always), as
# every side-by-side comparison runs it; its output goes to $4. The
# caller takes the pid from $!.
start_redis() {
	redis-server --port "$1" --bind 127.0.0.1 --dir "$2" --save '' \
		--appendonly yes --appendfsync "$3" --daemonize no >"$4" 2>&1 &
}

# bench_rps runs redis-benchmark against port $1 with $2 clients and $3
# requests, the rest of the arguments being the load, and prints
# "requests-per-second p99-ms" (nothing if the run printed nothing).
bench_rps() {
	local port=$1 clients=$2 requests=$3
	shift 3
	redis-benchmark -p "$port" -c "$clients" -n "$requests" --csv "$@" 2>/dev/null |
		awk -F'","' 'NR==2 {sub(/"$/, "", $7); print $2, $7}'
}
