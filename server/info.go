package server

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/eddy-streams/eddy/server/poll"
)

// infoSections are INFO's sections in Redis 7.0's order, with their
// titles; dflt marks those of INFO without arguments.
var infoSections = []struct {
	name, title string
	dflt        bool
}{
	{"server", "Server", true}, {"clients", "Clients", true}, {"memory", "Memory", true},
	{"persistence", "Persistence", true}, {"stats", "Stats", true}, {"replication", "Replication", true},
	{"cpu", "CPU", true}, {"modules", "Modules", true}, {"commandstats", "Commandstats", false},
	{"errorstats", "Errorstats", true}, {"cluster", "Cluster", true}, {"keyspace", "Keyspace", true},
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

// infoText builds INFO's reply: the sections of want, in Redis's order.
func (s *Server) infoText(ctx *cmdContext, want map[string]bool) string {
	var w infoWriter
	now := time.Now()
	for _, sec := range infoSections {
		if !want[sec.name] {
			continue
		}
		w.section(sec.title)
		switch sec.name {
		case "server":
			s.infoServer(&w, now)
		case "clients":
			s.infoClients(&w)
		case "memory":
			infoMemory(&w)
		case "persistence":
			s.infoPersistence(&w)
		case "stats":
			s.infoStats(&w)
		case "replication":
			s.infoReplication(w.line)
		case "cpu":
			infoCPU(&w)
		case "modules": // none
		case "commandstats":
			s.infoCommandStats(&w)
		case "errorstats":
			s.infoErrorStats(&w)
		case "cluster":
			w.line("cluster_enabled", 0)
		case "keyspace":
			s.infoKeyspace(&w, ctx)
		}
	}
	return w.b.String()
}

// infoWriter is INFO's reply being built: sections of "key:value" lines.
type infoWriter struct {
	b strings.Builder
	n int // sections begun
}

// section begins a section, after a blank line when one came before.
func (w *infoWriter) section(title string) {
	if w.n > 0 {
		w.b.WriteString("\r\n")
	}
	w.n++
	w.b.WriteString("# " + title + "\r\n")
}

// line writes a field.
func (w *infoWriter) line(k string, v any) { fmt.Fprintf(&w.b, "%s:%v\r\n", k, v) }

// printf writes a line of another shape (commandstats, errorstats,
// keyspace); format ends in "\r\n".
func (w *infoWriter) printf(format string, args ...any) { fmt.Fprintf(&w.b, format, args...) }

// infoServer writes the server section.
func (s *Server) infoServer(w *infoWriter, now time.Time) {
	up := now.Sub(s.started)
	w.line("redis_version", redisVersion)
	w.line("redis_git_sha1", "00000000")
	w.line("redis_git_dirty", 0)
	w.line("redis_build_id", "0")
	w.line("redis_mode", "standalone")
	w.line("os", osName())
	w.line("arch_bits", strconv.IntSize)
	w.line("monotonic_clock", "POSIX clock_gettime")
	w.line("multiplexing_api", poll.API)
	w.line("atomicvar_api", "c11-builtin")
	w.line("gcc_version", "0.0.0")
	w.line("process_id", os.Getpid())
	w.line("process_supervised", "no")
	w.line("run_id", s.runID)
	w.line("tcp_port", s.port)
	w.line("server_time_usec", now.UnixMicro())
	w.line("uptime_in_seconds", int64(up/time.Second))
	w.line("uptime_in_days", int64(up/(24*time.Hour)))
	w.line("hz", 10)
	w.line("configured_hz", 10)
	w.line("lru_clock", now.Unix()&(1<<24-1))
	exe, _ := os.Executable()
	w.line("executable", exe)
	w.line("config_file", "")
	w.line("io_threads_active", 0)
	v := s.cfg.Snapshot().Version
	if v == "" {
		v = Version
	}
	w.line("eddy_version", v)
}

// infoClients writes the clients section.
func (s *Server) infoClients(w *infoWriter) {
	s.mu.Lock()
	nc := len(s.clients)
	s.mu.Unlock()
	w.line("connected_clients", nc)
	w.line("cluster_connections", 0)
	w.line("maxclients", s.maxClients.Load())
	w.line("client_recent_max_input_buffer", 0)
	w.line("client_recent_max_output_buffer", 0)
	w.line("blocked_clients", s.blocks.count())
	w.line("tracking_clients", 0)
	w.line("clients_in_timeout_table", s.blocks.count())
}

// infoMemory writes the memory section: the Go heap as used memory.
func infoMemory(w *infoWriter) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	used := int64(ms.HeapAlloc)
	rss := rssBytes()
	w.line("used_memory", used)
	w.line("used_memory_human", humanBytes(used))
	w.line("used_memory_rss", rss)
	w.line("used_memory_rss_human", humanBytes(rss))
	w.line("used_memory_peak", int64(ms.HeapSys))
	w.line("used_memory_peak_human", humanBytes(int64(ms.HeapSys)))
	w.line("total_system_memory", totalMemory())
	w.line("total_system_memory_human", humanBytes(totalMemory()))
	w.line("maxmemory", 0)
	w.line("maxmemory_human", "0B")
	w.line("maxmemory_policy", "noeviction")
	w.line("mem_fragmentation_ratio", fmt.Sprintf("%.2f", float64(rss)/float64(max(used, 1))))
	w.line("mem_allocator", "go")
}

// infoPersistence writes the persistence section: Redis's fields for an
// AOF that is always on, then Eddy's own about the store's writes.
func (s *Server) infoPersistence(w *infoWriter) {
	loading := 0
	if s.repl.loading.Load() {
		loading = 1 // a replica loading a full sync (-LOADING meanwhile)
	}
	w.line("loading", loading)
	w.line("async_loading", 0)
	w.line("rdb_changes_since_last_save", 0)
	w.line("rdb_bgsave_in_progress", 0)
	w.line("rdb_last_save_time", s.started.Unix())
	w.line("rdb_last_bgsave_status", "ok")
	w.line("aof_enabled", 1)
	w.line("aof_rewrite_in_progress", 0)
	w.line("aof_last_write_status", "ok")
	w.line("appendfsync", s.cfg.Snapshot().AppendFsync)
	// Eddy's own: times the store stopped writes (L0 or memtables
	// waiting for compactions and flushes), their length in all,
	// and whether writes are stopped now. Every write waits out
	// a stop; nothing else would show one.
	ws := s.engine.WriteStalls()
	w.line("eddy_write_stalls", ws.Count)
	w.line("eddy_write_stall_ms", ws.Total.Milliseconds())
	w.line("eddy_write_stalled", b2i(ws.Stalled))
	// Eddy's own: how concurrent writes share batches and log
	// syncs (group commit): writes per group, writers per sync
	// (appendfsync always) and the time a sync takes.
	cs := s.engine.CommitStats()
	w.line("eddy_commit_groups", cs.Batches)
	w.line("eddy_commit_writes", cs.Writes)
	ss := s.engine.Syncs()
	w.line("eddy_syncs", ss.Count)
	w.line("eddy_sync_writers", ss.Writers)
	w.line("eddy_sync_usec", ss.Time.Microseconds())
	// Eddy's own: reads that met damaged data in the store's files
	// (they failed with "store damaged"), and the last such file.
	dm := s.engine.Damage()
	w.line("eddy_damaged_reads", dm.Reads)
	w.line("eddy_damaged_file", dm.LastFile)
}

// infoStats writes the stats section.
func (s *Server) infoStats(w *infoWriter) {
	st := &s.stats
	st.mu.Lock()
	total := st.total
	st.mu.Unlock()
	// Every field of Redis 7.0, in its order, so that exporters
	// find what they parse; what Eddy has no counterpart for
	// (replication links, forks, defrag, eviction) is zero.
	w.line("total_connections_received", st.connsReceived.Load())
	w.line("total_commands_processed", st.commands.Load())
	w.line("instantaneous_ops_per_sec", 0)
	w.line("total_net_input_bytes", st.netInput.Load())
	w.line("total_net_output_bytes", st.netOutput.Load())
	w.line("total_net_repl_input_bytes", 0)
	w.line("total_net_repl_output_bytes", 0)
	for _, k := range []string{"instantaneous_input_kbps", "instantaneous_output_kbps",
		"instantaneous_input_repl_kbps", "instantaneous_output_repl_kbps"} {
		w.line(k, "0.00")
	}
	w.line("rejected_connections", st.rejectedConns.Load())
	full, partOK, partErr := s.syncStats()
	w.line("sync_full", full)
	w.line("sync_partial_ok", partOK)
	w.line("sync_partial_err", partErr)
	w.line("expired_keys", st.expiredKeys.Load())
	w.line("expired_stale_perc", "0.00")
	w.line("expired_time_cap_reached_count", 0)
	w.line("expire_cycle_cpu_milliseconds", 0)
	w.line("evicted_keys", 0)
	w.line("evicted_clients", 0)
	w.line("total_eviction_exceeded_time", 0)
	w.line("current_eviction_exceeded_time", 0)
	w.line("keyspace_hits", st.hits.Load())
	w.line("keyspace_misses", st.misses.Load())
	for _, k := range []string{"pubsub_channels", "pubsub_patterns", "pubsubshard_channels", "latest_fork_usec",
		"total_forks", "migrate_cached_sockets", "slave_expires_tracked_keys", "active_defrag_hits",
		"active_defrag_misses", "active_defrag_key_hits", "active_defrag_key_misses", "total_active_defrag_time",
		"current_active_defrag_time", "tracking_total_keys", "tracking_total_items", "tracking_total_prefixes",
		"unexpected_error_replies"} {
		w.line(k, 0)
	}
	w.line("total_error_replies", total)
	for _, k := range []string{"dump_payload_sanitizations", "total_reads_processed", "total_writes_processed",
		"io_threaded_reads_processed", "io_threaded_writes_processed", "reply_buffer_shrinks", "reply_buffer_expands"} {
		w.line(k, 0)
	}
}

// infoCPU writes the CPU section.
func infoCPU(w *infoWriter) {
	sys, user := cpuSeconds()
	w.line("used_cpu_sys", fmt.Sprintf("%.6f", sys))
	w.line("used_cpu_user", fmt.Sprintf("%.6f", user))
	w.line("used_cpu_sys_children", "0.000000")
	w.line("used_cpu_user_children", "0.000000")
}

// infoCommandStats writes a line per command or subcommand called,
// refused or failed.
func (s *Server) infoCommandStats(w *infoWriter) {
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
		w.printf("cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
			spec.fullName(), calls, usec, per, rej, failed)
	}
}

// infoErrorStats writes a line per error code replied.
func (s *Server) infoErrorStats(w *infoWriter) {
	s.stats.mu.Lock()
	for _, code := range sortedKeys(s.stats.errors) {
		w.printf("errorstat_%s:count=%d\r\n", code, s.stats.errors[code])
	}
	s.stats.mu.Unlock()
}

// infoKeyspace writes a line per database with keys, read in ctx's
// transaction (none without one).
func (s *Server) infoKeyspace(w *infoWriter, ctx *cmdContext) {
	if ctx == nil || ctx.tx == nil {
		return
	}
	for db := 0; db < s.databases; db++ {
		keys, expires, err := ctx.tx.KeyspaceStats(db)
		if err != nil || keys == 0 {
			continue
		}
		w.printf("db%d:keys=%d,expires=%d,avg_ttl=0\r\n", db, keys, expires)
	}
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
