// Cluster routing against a real 3-master cluster: every command reaches the
// event's master first time (per node INFO commandstats / errorstats: calls
// match the events it owns, no MOVED), and the client recovers after a
// reshard (clients/testenv.py move-slot).

package ticketgate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const routedEvents, claimsPerEvent = 30, 5

// nodeStats reads per-node counters of the cluster.
type nodeStats map[string]*redis.Client

func clusterNodes(t *testing.T) ([]string, nodeStats) {
	nodes := os.Getenv("TICKETGATE_TEST_CLUSTER")
	if nodes == "" {
		t.Skip("no cluster: run through clients/testenv.py")
	}
	stats := nodeStats{}
	for _, addr := range strings.Split(nodes, ",") {
		c := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { _ = c.Close() })
		stats[addr] = c
	}
	return strings.Split(nodes, ","), stats
}

func (s nodeStats) reset(t *testing.T) {
	for _, c := range s {
		noErr(t, c.ConfigResetStat(context.Background()).Err())
	}
}

// stat reads one field of one INFO line per node, e.g. errorstat_MOVED count.
func (s nodeStats) stat(t *testing.T, section, name, field string) map[string]int64 {
	out := map[string]int64{}
	for addr, c := range s {
		info := check[string](t)(c.Info(context.Background(), section).Result())
		out[addr] = 0
		for _, line := range strings.Split(info, "\r\n") {
			rest, found := strings.CutPrefix(line, name+":")
			if !found {
				continue
			}
			for _, pair := range strings.Split(rest, ",") {
				if k, v, _ := strings.Cut(pair, "="); k == field {
					out[addr] = check[int64](t)(strconv.ParseInt(v, 10, 64))
				}
			}
		}
	}
	return out
}

func (s nodeStats) moved(t *testing.T) map[string]int64 {
	return s.stat(t, "errorstats", "errorstat_MOVED", "count")
}

// owner is the address of the master that owns a key's slot.
func (s nodeStats) owner(t *testing.T, key string) string {
	for _, c := range s {
		ctx := context.Background()
		slot := check[int64](t)(c.ClusterKeySlot(ctx, key).Result())
		for _, r := range check[[]redis.ClusterSlot](t)(c.ClusterSlots(ctx).Result()) {
			if int64(r.Start) <= slot && slot <= int64(r.End) {
				return r.Nodes[0].Addr
			}
		}
	}
	t.Fatalf("no owner for %s", key)
	return ""
}

func total(perNode map[string]int64) int64 {
	var sum int64
	for _, n := range perNode {
		sum += n
	}
	return sum
}

func TestClusterRouting(t *testing.T) {
	addrs, stats := clusterNodes(t)
	ctx := context.Background()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { _ = rdb.Close() })
	g := New(rdb)
	var events []string
	for i := 0; i < routedEvents; i++ {
		e := newEvent()
		noErr(t, g.Init(ctx, e, 1000))
		events = append(events, e)
	}
	stats.reset(t)
	want := map[string]int64{}
	for _, addr := range addrs {
		want[addr] = 0
	}
	for _, e := range events {
		for u := 0; u < claimsPerEvent; u++ {
			check[int64](t)(g.Claim(ctx, e, fmt.Sprintf("user-%d", u)))
		}
		want[stats.owner(t, "ticket:{"+e+"}:meta")] += claimsPerEvent
	}
	got := stats.stat(t, "commandstats", "cmdstat_ticket.claim", "calls")
	if fmt.Sprint(got) != fmt.Sprint(want) || total(stats.moved(t)) != 0 {
		t.Fatalf("claims per node %v, want %v; MOVED per node %v", got, want, stats.moved(t))
	}
	t.Logf("claims per node %v, MOVED per node %v", got, stats.moved(t))
	checkRawDo(t, rdb, stats, events)
	checkReshard(t, g, stats, addrs, events[0])
}

// checkRawDo: go-redis also routes a raw Do("ticket.claim", event, user) by
// the first key COMMAND INFO gives (the module declares it), without MOVED.
func checkRawDo(t *testing.T, rdb *redis.ClusterClient, stats nodeStats, events []string) {
	ctx := context.Background()
	stats.reset(t)
	for _, e := range events {
		noErr(t, rdb.Do(ctx, "ticket.claim", e, "raw-user").Err())
	}
	calls := stats.stat(t, "commandstats", "cmdstat_ticket.claim", "calls")
	if total(calls) != int64(len(events)) || total(stats.moved(t)) != 0 {
		t.Fatalf("raw Do: claims per node %v, MOVED per node %v", calls, stats.moved(t))
	}
}

// checkReshard moves the event's slot to another master: the client follows
// MOVED, reloads its slot map, and is back to no MOVED.
func checkReshard(t *testing.T, g *TicketGate, stats nodeStats, addrs []string, e string) {
	ctx := context.Background()
	key := "ticket:{" + e + "}:meta"
	from, to := stats.owner(t, key), ""
	for _, addr := range addrs {
		if addr != from {
			to = addr
		}
	}
	out, err := exec.Command("python3", "../testenv.py", "move-slot", "--cluster",
		strings.Join(addrs, ","), "--key", key, "--to", to).CombinedOutput()
	if err != nil {
		t.Fatalf("move-slot: %v\n%s", err, out)
	}
	stats.reset(t)
	check[int64](t)(g.Claim(ctx, e, "after-move-0"))
	settling := total(stats.moved(t))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		stats.reset(t)
		check[int64](t)(g.Claim(ctx, e, "after-move-0"))
		if total(stats.moved(t)) == 0 {
			break
		}
		settling += total(stats.moved(t))
		if time.Now().After(deadline) {
			t.Fatal("still MOVED 5 s after the reshard")
		}
	}
	stats.reset(t)
	for i := 1; i <= 20; i++ {
		check[int64](t)(g.Claim(ctx, e, fmt.Sprintf("after-move-%d", i)))
	}
	calls := stats.stat(t, "commandstats", "cmdstat_ticket.claim", "calls")
	if total(stats.moved(t)) != 0 || calls[to] != 20 {
		t.Fatalf("after the reshard: claims per node %v, MOVED %v", calls, stats.moved(t))
	}
	if s := check[*Status](t)(g.Status(ctx, e)); s.Claimed != claimsPerEvent+22 {
		t.Fatalf("the event did not move whole: %+v", s)
	}
	t.Logf("after the reshard: %d MOVED while the slot map caught up, then 0", settling)
}
