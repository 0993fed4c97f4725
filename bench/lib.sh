# lib.sh: helpers shared by bench.sh and modes.sh (sourced, not run).

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

# median prints the median of the numbers on stdin, one per line.
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
