package ticketgate

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestAllocationArgv: options in the documented order, SEATS last, FROM and
// KEY before SEATS; ALLOCATIONS typed with and without a release time.
func TestAllocationArgv(t *testing.T) {
	stub := startStub(t)
	rdb := redis.NewClient(&redis.Options{Addr: stub.addr(), Protocol: 2})
	t.Cleanup(func() { _ = rdb.Close() })
	g, ctx := New(rdb), context.Background()
	sent := func(want string, call func() error) {
		t.Helper()
		if err := call(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(stub.lastCommand(), " "); got != want {
			t.Errorf("sent %q, want %q", got, want)
		}
	}
	stub.replyWith("*0\r\n")
	o := AllocateOptions{Release: time.UnixMilli(99), Key: "k", Category: "box", Section: "A"}
	sent("ticket.allocate e house COUNT 4 SECTION A CATEGORY box KEY k RELEASE 99", func() error {
		_, err := g.Allocate(ctx, "e", "house", 4, o)
		return err
	})
	stub.replyWith("*0\r\n")
	sent("ticket.allocate e p KEY k SEATS 3 1", func() error {
		_, err := g.AllocateSeats(ctx, "e", "p", []int64{3, 1}, AllocateOptions{Key: "k"})
		return err
	})
	stub.replyWith("*0\r\n")
	sent("ticket.claim e u SPLIT FROM p KEY k SEATS 5 6", func() error {
		_, err := g.ClaimSeats(ctx, "e", "u", []int64{5, 6}, From("p", "k"), Split())
		return err
	})
	stub.replyWith(":1\r\n")
	sent("ticket.claim e u FROM p", func() error {
		_, err := g.Claim(ctx, "e", "u", From("p", ""))
		return err
	})
	stub.replyWith(":1\r\n")
	sent("ticket.release e p COUNT 2", func() error {
		_, err := g.ReleaseTickets(ctx, "e", "p", 2)
		return err
	})
	stub.replyWith("*2\r\n*4\r\n$5\r\nhouse\r\n:4\r\n:0\r\n$-1\r\n*4\r\n$1\r\np\r\n:2\r\n:1\r\n:1893456000000\r\n")
	all, err := g.Allocations(ctx, "e")
	release := int64(1893456000000)
	want := []Allocation{{Name: "house", Free: 4}, {Name: "p", Free: 2, Claimed: 1, Release: &release}}
	if err != nil || !reflect.DeepEqual(all, want) {
		t.Errorf("got %+v %v, want %+v", all, err, want)
	}
}
