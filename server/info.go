package server

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// infoSections are INFO's sections in Redis 7.0's order; dflt marks those
// of INFO without arguments.
var infoSections = []struct {
	name string
	dflt bool
}{
	{"server", true}, {"clients", true}, {"memory", true}, {"persistence", true}, {"stats", true},
	{"replication", true}, {"cpu", true}, {"modules", true}, {"commandstats", false}, {"errorstats", true},
	{"cluster", true}, {"keyspace", true},
}

// infoSelect turns INFO's arguments into the set of sections to print.
func infoSelect(args [][]byte) map[string]bool {
	want := make(map[string]bool)
	if len(args) == 0 {
		args = [][]byte{[]byte("default")}
	}
	for _, a := range args {
		switch n := lower(a); n {
		case "default":
			for _, s := range infoSections {
				if s.dflt {
					want[s.name] = true
				}
			}
		case "all", "everything":
			for _, s := range infoSections {
				want[s.name] = true
			}
		default:
			want[n] = true
		}
	}
	return want
}

func cmdInfo(ctx *cmdContext) {
	ctx.w.Verbatim(ctx.c.s.infoText(ctx, infoSelect(ctx.args[1:])))
}

// infoText builds INFO's reply.
func (s *Server) infoText(ctx *cmdContext, want map[string]bool) string {
	var b strings.Builder
	n := 0
	section := func(title string) {
		if n > 0 {
			b.WriteString("\r\n")
		}
		n++
		b.WriteString("# " + title + "\r\n")
	}
	line := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	now := time.Now()
	for _, sec := range infoSections {
		if !want[sec.name] {
			continue
		}
		switch sec.name {
		case "server":
			section("Server")
			up := now.Sub(s.started)
			line("redis_version", redisVersion)
			line("redis_git_sha1", "00000000")
			line("redis_git_dirty", 0)
			line("redis_build_id", "0")
			line("redis_mode", "standalone")
			line("os", osName())
			line("arch_bits", strconv.IntSize)
			line("monotonic_clock", "POSIX clock_gettime")
			line("multiplexing_api", "epoll")
			line("atomicvar_api", "c11-builtin")
			line("gcc_version", "0.0.0")
			line("process_id", os.Getpid())
			line("process_supervised", "no")
			line("run_id", s.runID)
			line("tcp_port", s.port)
			line("server_time_usec", now.UnixMicro())
			line("uptime_in_seconds", int64(up/time.Second))
			line("uptime_in_days", int64(up/(24*time.Hour)))
			line("hz", 10)
			line("configured_hz", 10)
			line("lru_clock", now.Unix()&(1<<24-1))
			exe, _ := os.Executable()
			line("executable", exe)
			line("config_file", "")
			line("io_threads_active", 0)
			v := s.cfg.Snapshot().Version
			if v == "" {
				v = Version
			}
			line("eddy_version", v)
		case "clients":
			section("Clients")
			s.mu.Lock()
			nc := len(s.clients)
			s.mu.Unlock()
			line("connected_clients", nc)
			line("cluster_connections", 0)
			line("maxclients", s.maxClients.Load())
			line("client_recent_max_input_buffer", 0)
			line("client_recent_max_output_buffer", 0)
			line("blocked_clients", s.blocks.count())
			line("tracking_clients", 0)
			line("clients_in_timeout_table", s.blocks.count())
		case "memory":
			section("Memory")
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			used := int64(ms.HeapAlloc)
			rss := rssBytes()
			line("used_memory", used)
			line("used_memory_human", humanBytes(used))
			line("used_memory_rss", rss)
			line("used_memory_rss_human", humanBytes(rss))
			line("used_memory_peak", int64(ms.HeapSys))
			line("used_memory_peak_human", humanBytes(int64(ms.HeapSys)))
			line("total_system_memory", totalMemory())
			line("total_system_memory_human", humanBytes(totalMemory()))
			line("maxmemory", 0)
			line("maxmemory_human", "0B")
			line("maxmemory_policy", "noeviction")
			line("mem_fragmentation_ratio", fmt.Sprintf("%.2f", float64(rss)/float64(max(used, 1))))
			line("mem_allocator", "go")
		case "persistence":
			section("Persistence")
			loading := 0
			if s.repl.loading.Load() {
				loading = 1 // a replica loading a full sync (-LOADING meanwhile)
			}
			line("loading", loading)
			line("async_loading", 0)
			line("rdb_changes_since_last_save", 0)
			line("rdb_bgsave_in_progress", 0)
			line("rdb_last_save_time", s.started.Unix())
			line("rdb_last_bgsave_status", "ok")
			line("aof_enabled", 1)
			line("aof_rewrite_in_progress", 0)
			line("aof_last_write_status", "ok")
			line("appendfsync", s.cfg.Snapshot().AppendFsync)
			// Eddy's own: times the store stopped writes (L0 or memtables
			// waiting for compactions and flushes), their length in all,
			// and whether writes are stopped now. Every write waits out
			// a stop; nothing else would show one.
			ws := s.db.WriteStalls()
			line("eddy_write_stalls", ws.Count)
			line("eddy_write_stall_ms", ws.Total.Milliseconds())
			line("eddy_write_stalled", b2i(ws.Stalled))
			// Eddy's own: how concurrent writes share batches and log
			// syncs (group commit): writes per group, writers per sync
			// (appendfsync always) and the time a sync takes.
			cs := s.engine.CommitStats()
			line("eddy_commit_groups", cs.Batches)
			line("eddy_commit_writes", cs.Writes)
			ss := s.db.Syncs()
			line("eddy_syncs", ss.Count)
			line("eddy_sync_writers", ss.Writers)
			line("eddy_sync_usec", ss.Time.Microseconds())
		case "stats":
			section("Stats")
			st := &s.stats
			st.mu.Lock()
			total := st.total
			st.mu.Unlock()
			// Every field of Redis 7.0, in its order, so that exporters
			// find what they parse; what Eddy has no counterpart for
			// (replication links, forks, defrag, eviction) is zero.
			line("total_connections_received", st.connsReceived.Load())
			line("total_commands_processed", st.commands.Load())
			line("instantaneous_ops_per_sec", 0)
			line("total_net_input_bytes", st.netInput.Load())
			line("total_net_output_bytes", st.netOutput.Load())
			line("total_net_repl_input_bytes", 0)
			line("total_net_repl_output_bytes", 0)
			for _, k := range []string{"instantaneous_input_kbps", "instantaneous_output_kbps",
				"instantaneous_input_repl_kbps", "instantaneous_output_repl_kbps"} {
				line(k, "0.00")
			}
			line("rejected_connections", st.rejectedConns.Load())
			full, partOK, partErr := s.syncStats()
			line("sync_full", full)
			line("sync_partial_ok", partOK)
			line("sync_partial_err", partErr)
			line("expired_keys", st.expiredKeys.Load())
			line("expired_stale_perc", "0.00")
			line("expired_time_cap_reached_count", 0)
			line("expire_cycle_cpu_milliseconds", 0)
			line("evicted_keys", 0)
			line("evicted_clients", 0)
			line("total_eviction_exceeded_time", 0)
			line("current_eviction_exceeded_time", 0)
			line("keyspace_hits", st.hits.Load())
			line("keyspace_misses", st.misses.Load())
			for _, k := range []string{"pubsub_channels", "pubsub_patterns", "pubsubshard_channels", "latest_fork_usec",
				"total_forks", "migrate_cached_sockets", "slave_expires_tracked_keys", "active_defrag_hits",
				"active_defrag_misses", "active_defrag_key_hits", "active_defrag_key_misses", "total_active_defrag_time",
				"current_active_defrag_time", "tracking_total_keys", "tracking_total_items", "tracking_total_prefixes",
				"unexpected_error_replies"} {
				line(k, 0)
			}
			line("total_error_replies", total)
			for _, k := range []string{"dump_payload_sanitizations", "total_reads_processed", "total_writes_processed",
				"io_threaded_reads_processed", "io_threaded_writes_processed", "reply_buffer_shrinks", "reply_buffer_expands"} {
				line(k, 0)
			}
		case "replication":
			section("Replication")
			s.infoReplication(line)
		case "cpu":
			section("CPU")
			sys, user := cpuSeconds()
			line("used_cpu_sys", fmt.Sprintf("%.6f", sys))
			line("used_cpu_user", fmt.Sprintf("%.6f", user))
			line("used_cpu_sys_children", "0.000000")
			line("used_cpu_user_children", "0.000000")
		case "modules":
			section("Modules")
		case "commandstats":
			section("Commandstats")
			for _, spec := range s.allSpecs() {
				st := s.cmdStats[spec]
				calls, usec := st.calls.Load(), st.usec.Load()
				rej, failed := st.rejected.Load(), st.failed.Load()
				if calls == 0 && rej == 0 && failed == 0 {
					continue
				}
				per := 0.0
				if calls > 0 {
					per = float64(usec) / float64(calls)
				}
				fmt.Fprintf(&b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
					spec.fullName(), calls, usec, per, rej, failed)
			}
		case "errorstats":
			section("Errorstats")
			s.stats.mu.Lock()
			for _, code := range sortedKeys(s.stats.errors) {
				fmt.Fprintf(&b, "errorstat_%s:count=%d\r\n", code, s.stats.errors[code])
			}
			s.stats.mu.Unlock()
		case "cluster":
			section("Cluster")
			line("cluster_enabled", 0)
		case "keyspace":
			section("Keyspace")
			if ctx == nil || ctx.tx == nil {
				continue
			}
			for db := 0; db < s.databases; db++ {
				keys, expires, err := ctx.tx.KeyspaceStats(db)
				if err != nil || keys == 0 {
					continue
				}
				fmt.Fprintf(&b, "db%d:keys=%d,expires=%d,avg_ttl=0\r\n", db, keys, expires)
			}
		}
	}
	return b.String()
}

// allSpecs lists every command and subcommand, in table order.
func (s *Server) allSpecs() []*commandSpec {
	var out []*commandSpec
	for _, c := range s.commands {
		out = append(out, c)
		out = append(out, c.subcommands...)
	}
	return out
}

// rssBytes reads the resident set size from /proc/self/statm.
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// humanBytes formats n as Redis's bytesToHuman does.
func humanBytes(n int64) string {
	d := float64(n)
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + "B"
	case n < 1024*1024:
		return fmt.Sprintf("%.2fK", d/1024)
	case n < 1024*1024*1024:
		return fmt.Sprintf("%.2fM", d/(1024*1024))
	case n < 1024*1024*1024*1024:
		return fmt.Sprintf("%.2fG", d/(1024*1024*1024))
	default:
		return fmt.Sprintf("%.2fT", d/(1024*1024*1024*1024))
	}
}
