package tests

import (
	"context"
	"net"
	"regexp"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A replica of a primary with requirepass authenticates with masterauth
// (and masteruser); with a wrong or missing password its link stays down,
// the primary's refusal is logged and retried, and a CONFIG SET of the
// right password brings the link up.

func authedClient(t *testing.T, addr, pass string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, Password: pass, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestReplMasterAuth(t *testing.T) {
	skipAgainstRedis(t)
	ctx := context.Background()
	p := startEddy(t, "--requirepass", "secret")
	pc := authedClient(t, p.Addr(), "secret")
	if err := pc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"a", "1"}}).Err(); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(p.Addr())
	for _, tc := range []struct {
		name    string
		args    []string
		refusal string // logged while the link is down; "" = the link comes up
	}{
		{"masterauth", []string{"--masterauth", "secret"}, ""},
		{"masteruser and masterauth", []string{"--masteruser", "default", "--masterauth", "secret"}, ""},
		{"wrong password", []string{"--masterauth", "wrong"}, "WRONGPASS"},
		{"wrong user", []string{"--masteruser", "nobody", "--masterauth", "secret"}, "WRONGPASS"},
		{"no masterauth", nil, "NOAUTH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startEddy(t, append([]string{"--replicaof", host + " " + port}, tc.args...)...)
			rc := r.Client()
			if tc.refusal != "" {
				// Refused, logged, and tried again: two refusals in the log.
				re := regexp.MustCompile(`replication link failed.*` + tc.refusal)
				waitFor(t, 10*time.Second, "two logged refusals", func() (bool, error) {
					return len(re.FindAllString(r.log.String(), -1)) >= 2, nil
				})
				if v := infoField(t, rc, "replication", "master_link_status"); v != "down" {
					t.Fatalf("master_link_status:%s with a refused AUTH", v)
				}
				if err := rc.Ping(ctx).Err(); err != nil {
					t.Fatalf("the replica does not answer after refusals: %v", err)
				}
				// The right credentials apply from the next attempt.
				if err := rc.ConfigSet(ctx, "masteruser", "").Err(); err != nil {
					t.Fatal(err)
				}
				if err := rc.ConfigSet(ctx, "masterauth", "secret").Err(); err != nil {
					t.Fatal(err)
				}
				if v := rc.ConfigGet(ctx, "masterauth").Val()["masterauth"]; v != "secret" {
					t.Fatalf("CONFIG GET masterauth = %q", v)
				}
			}
			waitLinkUp(t, rc)
			id, err := pc.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"after", tc.name}}).Result()
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, "the entry on the replica", func() (bool, error) {
				es, err := rc.XRange(ctx, "s", id, id).Result()
				return len(es) == 1, err
			})
			compareServers(t, pc, rc)
		})
	}
}
