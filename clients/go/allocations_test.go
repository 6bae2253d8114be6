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

// TestAllocations against the real servers, standalone and on the cluster:
// house seats with a release time and a partner with a key on a seated
// event, claims From, the errors, a public claim skipping allocated seats,
// Allocations, Release, Status.Allocated and the seat map's 'a'.
func TestAllocations(t *testing.T) {
	for name, rdb := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			g, e := New(rdb), newEvent()
			noErr(t, g.Init(ctx, e, 10, Limit(4), Seats(hall)))
			in2100 := time.UnixMilli(4102444800000)
			got, err := g.AllocateSeats(ctx, e, "house", []int64{5, 6}, AllocateOptions{Release: in2100})
			wantTickets(t, got, err, 5, 6)
			got, err = g.Allocate(ctx, e, "fanclub", 2, AllocateOptions{Category: "box", Key: "fc"})
			wantTickets(t, got, err, 8, 9)
			_, err = g.Allocate(ctx, e, "fanclub", 1, AllocateOptions{Key: "other"})
			wantErr(t, err, ErrNoKey)
			_, err = g.Allocate(ctx, e, "more", 7, AllocateOptions{})
			wantErr(t, err, ErrShort)
			wantSeatmap(t, g, e, "....aa.aa.")
			if s := check[*Status](t)(g.Status(ctx, e)); s.Allocated == nil || *s.Allocated != 4 {
				t.Fatalf("status %+v", s)
			}
			_, err = g.ClaimTickets(ctx, e, "fan1", 2, From("fanclub", ""))
			wantErr(t, err, ErrNoKey)
			got, err = g.ClaimTickets(ctx, e, "fan1", 2, From("fanclub", "fc"))
			wantTickets(t, got, err, 8, 9)
			_, err = g.Claim(ctx, e, "fan2", From("fanclub", "fc"))
			wantErr(t, err, ErrSoldOut)
			_, err = g.ClaimSeats(ctx, e, "fan2", []int64{5}, From("nope", ""))
			wantErr(t, err, ErrNoAllocation)
			got, err = g.ClaimTickets(ctx, e, "pub", 4)
			wantTickets(t, got, err, 1, 2, 3, 4)
			release := in2100.UnixMilli()
			want := []Allocation{{Name: "fanclub", Claimed: 2}, {Name: "house", Free: 2, Release: &release}}
			if all := check[[]Allocation](t)(g.Allocations(ctx, e)); !reflect.DeepEqual(all, want) {
				t.Fatalf("allocations %+v, want %+v", all, want)
			}
			if n := check[int64](t)(g.ReleaseSeats(ctx, e, "house", []int64{5})); n != 1 {
				t.Fatalf("released %d", n)
			}
			if n := check[int64](t)(g.Release(ctx, e, "house")); n != 1 {
				t.Fatalf("released %d", n)
			}
			if s := check[*Status](t)(g.Status(ctx, e)); s.Remaining != 4 || s.Allocated != nil {
				t.Fatalf("status %+v", s)
			}
			wantSeatmap(t, g, e, "ssss...ss.")
		})
	}
}
