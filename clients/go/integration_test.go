// Integration tests against a real redis-server with the module, standalone
// and a 3-master cluster, as clients/testenv.py announces them
// (TICKETGATE_TEST_REDIS, TICKETGATE_TEST_CLUSTER); skipped without them.

package ticketgate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var eventSeq atomic.Int64

// newEvent names a fresh event (ids are at most 64 bytes).
func newEvent() string {
	return fmt.Sprintf("go-%s-%d", strconv.FormatInt(time.Now().UnixNano(), 36), eventSeq.Add(1))
}

// backends are the clients to test with: a standalone and a cluster client.
func backends(t *testing.T) map[string]redis.UniversalClient {
	t.Helper()
	out := map[string]redis.UniversalClient{}
	if url := os.Getenv("TICKETGATE_TEST_REDIS"); url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		out["standalone"] = redis.NewClient(opt)
	}
	if nodes := os.Getenv("TICKETGATE_TEST_CLUSTER"); nodes != "" {
		out["cluster"] = redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(nodes, ",")})
	}
	if len(out) == 0 {
		t.Skip("no servers: run through clients/testenv.py")
	}
	for _, c := range out {
		t.Cleanup(func() { _ = c.Close() })
	}
	return out
}

// check fails the test on an error and passes the value on:
// check[int64](t)(g.Claim(ctx, e, u)).
func check[T any](t *testing.T) func(T, error) T {
	return func(value T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return value
	}
}

// noErr fails the test on an error.
func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("got %v, want %v", err, sentinel)
	}
}

func TestSaleLifecycle(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range backends(t) {
		t.Run(name, func(t *testing.T) {
			g, e := New(rdb), newEvent()
			noErr(t, g.Init(ctx, e, 3, DefaultHold(10*time.Minute), Limit(2)))
			wantErr(t, g.Init(ctx, e, 3), ErrExists)
			if got := check[[]int64](t)(g.ClaimTickets(ctx, e, "alice", 2)); fmt.Sprint(got) != "[1 2]" {
				t.Fatalf("claimed %v", got)
			}
			if got := check[int64](t)(g.Claim(ctx, e, "alice")); got != 1 {
				t.Fatalf("a holder gets her lowest ticket back, got %d", got)
			}
			held := check[*Order](t)(g.Order(ctx, e, "alice"))
			if held.State != OrderHeld || held.ExpiresAt <= time.Now().UnixMilli() {
				t.Fatalf("order %+v", held)
			}
			if n := check[int64](t)(g.Confirm(ctx, e, "alice")); n != 2 {
				t.Fatalf("confirm: %d", n)
			}
			sold := check[*Order](t)(g.Order(ctx, e, "alice"))
			if sold.State != OrderSold || sold.ExpiresAt != 0 || fmt.Sprint(sold.Tickets) != "[1 2]" {
				t.Fatalf("order %+v", sold)
			}
			_, err := g.ClaimTickets(ctx, e, "bob", 3)
			wantErr(t, err, ErrLimit)
			if got := check[int64](t)(g.Claim(ctx, e, "bob", Hold(0))); got != 3 {
				t.Fatalf("bob got %d", got)
			}
			_, err = g.Claim(ctx, e, "carol")
			wantErr(t, err, ErrSoldOut)
			var tgErr *Error
			if !errors.As(err, &tgErr) || tgErr.Code != "SOLDOUT" || !strings.Contains(tgErr.Message, e) {
				t.Fatalf("error detail %#v", tgErr)
			}
			_, err = g.Confirm(ctx, e, "carol")
			wantErr(t, err, ErrNoHold)
			checkLifecycleEnd(t, g, e)
		})
	}
}

func checkLifecycleEnd(t *testing.T, g *TicketGate, e string) {
	ctx := context.Background()
	if ticket, ok, err := g.Holder(ctx, e, "bob"); err != nil || !ok || ticket != 3 {
		t.Fatalf("holder bob: %d %v %v", ticket, ok, err)
	}
	if _, ok, err := g.Holder(ctx, e, "carol"); err != nil || ok {
		t.Fatalf("holder carol: %v %v", ok, err)
	}
	s := check[*Status](t)(g.Status(ctx, e))
	if s.Total != 3 || s.Remaining != 0 || s.Claimed != 3 || s.State != StateOpen || s.Unsynced == 0 || s.Draw != nil {
		t.Fatalf("status %+v", s)
	}
	_, err := g.Drop(ctx, e, false)
	wantErr(t, err, ErrUnsynced)
	if n := check[int64](t)(g.Drop(ctx, e, true)); n == 0 {
		t.Fatal("drop deleted nothing")
	}
	_, err = g.Status(ctx, e)
	wantErr(t, err, ErrNoEvent)
}

func TestWaitingListAndOpening(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range backends(t) {
		t.Run(name, func(t *testing.T) {
			g, e := New(rdb), newEvent()
			later := e + "-later"
			noErr(t, g.Init(ctx, later, 1, OpensAt(time.Now().Add(time.Hour))))
			_, err := g.Claim(ctx, later, "alice")
			wantErr(t, err, ErrNotOpen)
			noErr(t, g.Init(ctx, e, 1))
			noErr(t, g.Close(ctx, e))
			_, err = g.Claim(ctx, e, "alice")
			wantErr(t, err, ErrClosed)
			noErr(t, g.Open(ctx, e))
			check[int64](t)(g.Claim(ctx, e, "alice"))
			_, err = g.Wait(ctx, e, "alice")
			wantErr(t, err, ErrHolding)
			if pos := check[int64](t)(g.Wait(ctx, e, "bob")); pos != 1 {
				t.Fatalf("bob at %d", pos)
			}
			if pos := check[int64](t)(g.WaitTickets(ctx, e, "carol", 1)); pos != 2 {
				t.Fatalf("carol at %d", pos)
			}
			if pos, ok, err := g.Position(ctx, e, "carol"); err != nil || !ok || pos != 2 {
				t.Fatalf("position carol %d %v %v", pos, ok, err)
			}
			if !check[bool](t)(g.Leave(ctx, e, "carol")) || check[bool](t)(g.Leave(ctx, e, "carol")) {
				t.Fatal("leave: want true then false")
			}
			if _, ok, err := g.Position(ctx, e, "carol"); err != nil || ok {
				t.Fatalf("carol still placed: %v %v", ok, err)
			}
			checkOffer(t, g, e)
		})
	}
}

// checkOffer: a cancelled ticket goes to the head of the waiting list.
func checkOffer(t *testing.T, g *TicketGate, e string) {
	ctx := context.Background()
	if ticket, ok, err := g.Cancel(ctx, e, "alice"); err != nil || !ok || ticket != 1 {
		t.Fatalf("cancel: %d %v %v", ticket, ok, err)
	}
	if o := check[*Order](t)(g.Order(ctx, e, "bob")); o == nil || o.State != OrderHeld {
		t.Fatalf("bob's offer: %+v", o)
	}
	if pos, ok, err := g.Position(ctx, e, "bob"); err != nil || !ok || pos != 0 {
		t.Fatalf("bob is offered, position 0: %d %v %v", pos, ok, err)
	}
	noErr(t, g.Close(ctx, e))
	if n := check[int64](t)(g.Confirm(ctx, e, "bob")); n != 1 {
		t.Fatalf("confirm after close: %d", n)
	}
	if s := check[*Status](t)(g.Status(ctx, e)); s.State != StateClosed {
		t.Fatalf("state %q", s.State)
	}
	_, err := g.Claim(ctx, e, "bad\x01user")
	wantErr(t, err, ErrInvalid)
}

// TestThousandUsersOnHundredTickets is the reference design's test.
func TestThousandUsersOnHundredTickets(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range backends(t) {
		t.Run(name, func(t *testing.T) {
			g, e := New(rdb), newEvent()
			noErr(t, g.Init(ctx, e, 100))
			winners, soldOut := contest(t, g, e, 1000)
			sort.Slice(winners, func(i, j int) bool { return winners[i] < winners[j] })
			if len(winners) != 100 || soldOut != 900 {
				t.Fatalf("%d winners, %d sold out", len(winners), soldOut)
			}
			for i, ticket := range winners {
				if ticket != int64(i+1) {
					t.Fatalf("winners hold %v, want 1..=100", winners)
				}
			}
		})
	}
}

// contest runs users claiming at once; it returns the tickets won and the
// count of ErrSoldOut answers, and fails on any other error.
func contest(t *testing.T, g *TicketGate, e string, users int) ([]int64, int) {
	var mu sync.Mutex
	var winners []int64
	soldOut := 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for u := 0; u < users; u++ {
		wg.Add(1)
		go func(user string) {
			defer wg.Done()
			<-start
			ticket, err := g.Claim(context.Background(), e, user)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, ErrSoldOut):
				soldOut++
			case err != nil:
				t.Errorf("claim %s: %v", user, err)
			default:
				winners = append(winners, ticket)
			}
		}(fmt.Sprintf("user-%d", u))
	}
	close(start)
	wg.Wait()
	return winners, soldOut
}
