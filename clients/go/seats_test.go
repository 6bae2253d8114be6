// Seated events against the real servers: a seated sale (best available,
// picked seats and their errors, the layout naming seat ids, the seat map,
// STATUS's categories and ORDER's seats) standalone and on the cluster, and
// every seat command reaching the event's master first time (0 MOVED).

package ticketgate

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// hall: section A, row 1 of six seats (ids 1-6), row 2 of four labelled from
// 101 (ids 7-10), its first a wheelchair space, category box.
const hall = `{"sections":[{"name":"A","category":"front","rows":[{"name":"1","seats":6},` +
	`{"name":"2","seats":4,"first":101,"accessible":[1],"category":"box"}]}]}`

func wantTickets(t *testing.T, got []int64, err error, want ...int64) {
	t.Helper()
	noErr(t, err)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func wantSeatmap(t *testing.T, g *TicketGate, e, want string) {
	t.Helper()
	m, ok, err := g.Seatmap(context.Background(), e)
	noErr(t, err)
	if !ok || m != want {
		t.Fatalf("seat map %q (%v), want %q", m, ok, want)
	}
}

func TestSeatedSale(t *testing.T) {
	for name, rdb := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			g, e := New(rdb), newEvent()
			noErr(t, g.Init(ctx, e, 10, DefaultHold(time.Hour), Limit(4), Seats(hall)))
			layout := check[*Layout](t)(g.Layout(ctx, e))
			if layout == nil || layout.Total() != 10 || layout.SeatName(7) != "A-2-101" {
				t.Fatalf("layout %+v", layout)
			}
			wantSeatmap(t, g, e, "..........")
			ann := check[[]int64](t)(g.ClaimTickets(ctx, e, "ann", 2))
			if names := []string{layout.SeatName(ann[0]), layout.SeatName(ann[1])}; names[0] != "A-1-3" || names[1] != "A-1-4" {
				t.Fatalf("ann got %v", names)
			}
			_, err := g.ClaimSeats(ctx, e, "bob", []int64{4})
			wantErr(t, err, ErrTaken)
			_, err = g.ClaimSeats(ctx, e, "bob", []int64{8})
			wantErr(t, err, ErrOrphan)
			got, err := g.ClaimSeats(ctx, e, "bob", []int64{5, 6}, Hold(0))
			wantTickets(t, got, err, 5, 6)
			got, err = g.ClaimTickets(ctx, e, "cy", 2, Accessible(1))
			wantTickets(t, got, err, 7, 8)
			_, err = g.ClaimTickets(ctx, e, "dee", 3)
			wantErr(t, err, ErrNotTogether)
			got, err = g.ClaimTickets(ctx, e, "dee", 3, Split())
			wantTickets(t, got, err, 1, 2, 9)
			got, err = g.ClaimTickets(ctx, e, "eve", 1, InCategory("box"), InSection("A"))
			wantTickets(t, got, err, 10)
			checkSeatedEnd(t, g, e)
		})
	}
}

func checkSeatedEnd(t *testing.T, g *TicketGate, e string) {
	ctx := context.Background()
	s := check[*Status](t)(g.Status(ctx, e))
	want := []CategoryFree{{"front", 0}, {"box", 0}}
	if s.Remaining != 0 || !reflect.DeepEqual(s.Categories, want) || s.Accessible == nil || *s.Accessible != 0 {
		t.Fatalf("status %+v", s)
	}
	o := check[*Order](t)(g.Order(ctx, e, "cy"))
	if !reflect.DeepEqual(o.Seats, []string{"A-2-101", "A-2-102"}) {
		t.Fatalf("order %+v", o)
	}
	wantSeatmap(t, g, e, "hhhhsshhhh")
	if first, ok, err := g.Cancel(ctx, e, "dee"); err != nil || !ok || first != 1 {
		t.Fatalf("cancel: %d %v %v", first, ok, err)
	}
	wantSeatmap(t, g, e, "..hhsshh.h") // every seat of the order back
	plain := e + "-plain"
	noErr(t, g.Init(ctx, plain, 1))
	if l, err := g.Layout(ctx, plain); l != nil || err != nil {
		t.Fatalf("layout of a plain event: %v %v", l, err)
	}
	if _, ok, err := g.Seatmap(ctx, plain); ok || err != nil {
		t.Fatalf("seat map of a plain event: %v %v", ok, err)
	}
	if s := check[*Status](t)(g.Status(ctx, plain)); s.Categories != nil || s.Accessible != nil {
		t.Fatalf("status of a plain event %+v", s)
	}
}

func TestClusterRoutingSeats(t *testing.T) {
	addrs, stats := clusterNodes(t)
	ctx := context.Background()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { _ = rdb.Close() })
	g := New(rdb)
	var events []string
	for i := 0; i < 12; i++ {
		e := newEvent()
		noErr(t, g.Init(ctx, e, 10, Limit(2), Seats(hall)))
		events = append(events, e)
	}
	stats.reset(t)
	want := map[string]int64{}
	for _, addr := range addrs {
		want[addr] = 0
	}
	for _, e := range events {
		got, err := g.ClaimTickets(ctx, e, "a", 2, InSection("A"))
		wantTickets(t, got, err, 3, 4)
		got, err = g.ClaimSeats(ctx, e, "b", []int64{5, 6})
		wantTickets(t, got, err, 5, 6)
		check[*Layout](t)(g.Layout(ctx, e))
		wantSeatmap(t, g, e, "..ssss....")
		want[stats.owner(t, "ticket:{"+e+"}:meta")]++
	}
	for _, command := range []string{"layout", "seatmap"} {
		got := stats.stat(t, "commandstats", "cmdstat_ticket."+command, "calls")
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s per node %v, want %v", command, got, want)
		}
	}
	if moved := stats.moved(t); total(moved) != 0 {
		t.Fatalf("MOVED per node %v", moved)
	}
}
