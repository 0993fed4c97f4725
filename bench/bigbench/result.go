//go:build linux

package main

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/eddy-streams/eddy/bench/internal/stats"
)

// pair is one figure on both servers.
type pair struct {
	Redis float64 `json:"redis"`
	Eddy  float64 `json:"eddy"`
}

func (p *pair) set(server string, v float64) {
	if server == "redis" {
		p.Redis = v
	} else {
		p.Eddy = v
	}
}

type memReport struct {
	RSS        int64 `json:"rss"`         // VmRSS after the load and the quiet spell
	Peak       int64 `json:"peak"`        // VmHWM: the most resident during the load
	UsedMemory int64 `json:"used_memory"` // INFO memory: Redis's allocator, Eddy's Go heap
}

type memPair struct {
	Redis memReport `json:"redis"`
	Eddy  memReport `json:"eddy"`
}

func (m *memPair) set(server string, r memReport) {
	if server == "redis" {
		m.Redis = r
	} else {
		m.Eddy = r
	}
}

type disk struct {
	RedisRDB      dirSize `json:"redis_rdb"`      // dump.rdb after SAVE
	RedisAOF      dirSize `json:"redis_aof"`      // appendonlydir after the load
	RedisSaveS    float64 `json:"redis_save_s"`   // SAVE took
	EddyLive      dirSize `json:"eddy_live"`      // while serving, after the load
	EddyStopped   dirSize `json:"eddy_stopped"`   // after a clean shutdown
	EddyCompacted dirSize `json:"eddy_compacted"` // after eddy compact
	EddyCompactS  float64 `json:"eddy_compact_s"` // eddy compact took
}

type startup struct {
	RedisMs  []float64 `json:"redis_ms_rounds"`
	EddyMs   []float64 `json:"eddy_ms_rounds"`
	RedisRSS []int64   `json:"redis_rss_rounds"` // VmRSS at the first PONG
	EddyRSS  []int64   `json:"eddy_rss_rounds"`
	// One start of the store as the loading server left it, before
	// eddy compact.
	EddyUncompactedMs float64 `json:"eddy_uncompacted_ms"`
}

func (s *startup) add(server string, ms float64, rss int64) {
	if server == "redis" {
		s.RedisMs, s.RedisRSS = append(s.RedisMs, ms), append(s.RedisRSS, rss)
	} else {
		s.EddyMs, s.EddyRSS = append(s.EddyMs, ms), append(s.EddyRSS, rss)
	}
}

type ranges struct {
	Redis []rangeResult `json:"redis_rounds"`
	Eddy  []rangeResult `json:"eddy_rounds"`
}

func (r *ranges) add(server string, rr rangeResult) {
	if server == "redis" {
		r.Redis = append(r.Redis, rr)
	} else {
		r.Eddy = append(r.Eddy, rr)
	}
}

// summary holds the headline figures, computed by finish.
type summary struct {
	RSSRatio           float64 `json:"rss_ratio"`                 // target <= 0.15
	RedisBytesPerEntry float64 `json:"redis_rdb_bytes_per_entry"` //
	EddyBytesPerEntry  float64 `json:"eddy_disk_bytes_per_entry"` // compacted
	DiskRatio          float64 `json:"disk_ratio"`                // target <= 1.0
	RedisStartMs       float64 `json:"redis_start_ms"`            // median
	EddyStartMs        float64 `json:"eddy_start_ms"`             // median
	StartRatio         float64 `json:"start_ratio"`               // target <= 0.1
	RedisRangeP50Ms    float64 `json:"redis_xrange_p50_ms"`       // median of rounds
	RedisRangeP99Ms    float64 `json:"redis_xrange_p99_ms"`       //
	EddyRangeP50Ms     float64 `json:"eddy_xrange_p50_ms"`        //
	EddyRangeP99Ms     float64 `json:"eddy_xrange_p99_ms"`        // target <= 5
}

type result struct {
	Entries     uint64  `json:"entries"`
	FieldBytes  int     `json:"field_bytes_per_entry"`
	Rounds      int     `json:"rounds"`
	RangeRounds int     `json:"range_rounds"`
	WriteMB     float64 `json:"write_mb"`
	SettleS     float64 `json:"settle_s"`
	EddyArgs    string  `json:"eddy_args,omitempty"`
	LoadS       pair    `json:"load_s"`
	Memory      memPair `json:"memory"`
	Disk        disk    `json:"disk"`
	Startup     startup `json:"startup"`
	Range       ranges  `json:"xrange_under_load"`
	Summary     summary `json:"summary"`
}

func (r *result) finish() {
	s := &r.Summary
	s.RSSRatio = stats.Ratio(float64(r.Memory.Eddy.RSS), float64(r.Memory.Redis.RSS))
	n := float64(r.Entries)
	s.RedisBytesPerEntry = float64(r.Disk.RedisRDB.Bytes) / n
	s.EddyBytesPerEntry = float64(r.Disk.EddyCompacted.Bytes) / n
	s.DiskRatio = stats.Ratio(s.EddyBytesPerEntry, s.RedisBytesPerEntry)
	s.RedisStartMs, s.EddyStartMs = stats.Median(r.Startup.RedisMs), stats.Median(r.Startup.EddyMs)
	s.StartRatio = stats.Ratio(s.EddyStartMs, s.RedisStartMs)
	med := func(rs []rangeResult, f func(rangeResult) float64) float64 {
		var xs []float64
		for _, x := range rs {
			xs = append(xs, f(x))
		}
		return stats.Median(xs)
	}
	p50 := func(x rangeResult) float64 { return x.P50Ms }
	p99 := func(x rangeResult) float64 { return x.P99Ms }
	s.RedisRangeP50Ms, s.RedisRangeP99Ms = med(r.Range.Redis, p50), med(r.Range.Redis, p99)
	s.EddyRangeP50Ms, s.EddyRangeP99Ms = med(r.Range.Eddy, p50), med(r.Range.Eddy, p99)
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func (r *result) print(w io.Writer) {
	s := r.Summary
	fmt.Fprintf(w, "\nbig stream: %d entries of 3 fields, %d bytes of names and values each\n", r.Entries, r.FieldBytes)
	if r.EddyArgs != "" {
		fmt.Fprintf(w, "eddy run with: %s\n", r.EddyArgs)
	}
	fmt.Fprintf(w, "%-44s %12s %12s %8s %8s\n", "metric", "redis", "eddy", "ratio", "target")
	row := func(name string, a, b float64, prec int, target string) {
		fmt.Fprintf(w, "%-44s %12.*f %12.*f %8.2f %8s\n", name, prec, a, prec, b, stats.Ratio(b, a), target)
	}
	row(fmt.Sprintf("RSS after load + %gs idle, MiB", r.SettleS), mb(r.Memory.Redis.RSS), mb(r.Memory.Eddy.RSS), 1, "<= 0.15")
	row("peak RSS (VmHWM), MiB", mb(r.Memory.Redis.Peak), mb(r.Memory.Eddy.Peak), 1, "")
	row("INFO used_memory, MiB", mb(r.Memory.Redis.UsedMemory), mb(r.Memory.Eddy.UsedMemory), 1, "")
	row("disk bytes/entry (RDB / compacted store)", s.RedisBytesPerEntry, s.EddyBytesPerEntry, 1, "<= 1.0")
	row("disk bytes/entry (AOF / store before compact)", float64(r.Disk.RedisAOF.Bytes)/float64(r.Entries),
		float64(r.Disk.EddyStopped.Bytes)/float64(r.Entries), 1, "")
	row(fmt.Sprintf("start to first PONG, ms (median of %d)", r.Rounds), s.RedisStartMs, s.EddyStartMs, 1, "<= 0.1")
	row(fmt.Sprintf("XRANGE oldest %d under write, p50 ms", rangeCount), s.RedisRangeP50Ms, s.EddyRangeP50Ms, 3, "")
	row(fmt.Sprintf("XRANGE oldest %d under write, p99 ms", rangeCount), s.RedisRangeP99Ms, s.EddyRangeP99Ms, 3, "eddy<=5")
	fmt.Fprintf(w, "load (pipelined XADD), s: redis %.1f, eddy %.1f; redis SAVE %.1fs; eddy compact %.1fs; eddy start before compact %.0f ms\n",
		r.LoadS.Redis, r.LoadS.Eddy, r.Disk.RedisSaveS, r.Disk.EddyCompactS, r.Startup.EddyUncompactedMs)
	fmt.Fprintf(w, "eddy store by kind after compact, MiB:")
	for _, k := range slices.Sorted(maps.Keys(r.Disk.EddyCompacted.ByKind)) {
		fmt.Fprintf(w, " %s %.1f", k, mb(r.Disk.EddyCompacted.ByKind[k]))
	}
	fmt.Fprintln(w)
	for i := range r.Range.Redis {
		if i < len(r.Range.Eddy) {
			a, b := r.Range.Redis[i], r.Range.Eddy[i]
			fmt.Fprintf(w, "XRANGE round %d: redis p99 %.3f ms (%d calls, writes %.1f MB/s), eddy p99 %.3f ms (%d calls, writes %.1f MB/s)\n",
				i, a.P99Ms, a.Samples, a.WriteMBs, b.P99Ms, b.Samples, b.WriteMBs)
		}
	}
}
