package ticketgate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTransferAndScan against the real servers, standalone and on the
// cluster: a sold ticket changes hands a generation up (Order.Gens), is
// admitted once at that generation, and every refusal is typed.
func TestTransferAndScan(t *testing.T) {
	for name, rdb := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			g, e := New(rdb), newEvent()
			noErr(t, g.Init(ctx, e, 5, DefaultHold(time.Hour), Limit(2)))
			got, err := g.ClaimTickets(ctx, e, "ann", 2, Hold(0))
			wantTickets(t, got, err, 1, 2)
			if n := check[int64](t)(g.TransferTickets(ctx, e, "ann", "ben", []int64{2})); n != 1 {
				t.Fatalf("moved %d", n)
			}
			if o := check[*Order](t)(g.Order(ctx, e, "ben")); fmt.Sprint(o.Tickets, o.Gens) != "[2] [2]" {
				t.Fatalf("ben's order %+v", o)
			}
			noErr(t, g.Scan(ctx, e, 2, 2, "north"))
			err = g.Scan(ctx, e, 2, 2, "")
			wantErr(t, err, ErrUsed)
			var used *Error
			if !errors.As(err, &used) || !strings.HasSuffix(used.Message, "at gate 'north'") {
				t.Fatalf("used: %v", err)
			}
			wantErr(t, g.Scan(ctx, e, 2, 1, ""), ErrStale)
			wantErr(t, g.Scan(ctx, e, 5, 1, ""), ErrNotSold)
			checkTransferRefusals(t, g, e)
			if n := check[int64](t)(g.Transfer(ctx, e, "ann", "fay")); n != 1 {
				t.Fatalf("moved %d", n)
			}
			noErr(t, g.Scan(ctx, e, 1, 2, ""))
		})
	}
}

// checkTransferRefusals: a scanned ticket, a held order, a giver with
// nothing, a receiver at the event's limit.
func checkTransferRefusals(t *testing.T, g *TicketGate, e string) {
	t.Helper()
	ctx := context.Background()
	_, err := g.Transfer(ctx, e, "ben", "cy")
	wantErr(t, err, ErrUsed)
	if n := check[int64](t)(g.Claim(ctx, e, "dee")); n != 3 {
		t.Fatalf("dee got %d", n)
	}
	_, err = g.Transfer(ctx, e, "dee", "cy")
	wantErr(t, err, ErrNotSold)
	_, err = g.Transfer(ctx, e, "nobody", "cy")
	wantErr(t, err, ErrNoHold)
	got, err := g.ClaimTickets(ctx, e, "eve", 2, Hold(0))
	wantTickets(t, got, err, 4, 5)
	_, err = g.Transfer(ctx, e, "ann", "eve")
	wantErr(t, err, ErrLimit)
}

// TestResellAndUnlist against the real servers, standalone and on the
// cluster: a listed ticket goes to a buyer once the free ones are gone,
// a generation up, and every refusal is typed.
func TestResellAndUnlist(t *testing.T) {
	for name, rdb := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			g, e := New(rdb), newEvent()
			noErr(t, g.Init(ctx, e, 6, DefaultHold(time.Hour), Limit(4)))
			got, err := g.ClaimTickets(ctx, e, "ann", 2, Hold(0))
			wantTickets(t, got, err, 1, 2)
			if n := check[int64](t)(g.Claim(ctx, e, "ben", Hold(0))); n != 3 {
				t.Fatalf("ben got %d", n)
			}
			noErr(t, g.Scan(ctx, e, 3, 1, ""))
			if n := check[int64](t)(g.Claim(ctx, e, "cy")); n != 4 {
				t.Fatalf("cy got %d", n)
			}
			wantResale(t, g, e, 0)
			if n := check[int64](t)(g.ResellTickets(ctx, e, "ann", []int64{2})); n != 1 {
				t.Fatalf("listed %d", n)
			}
			wantResale(t, g, e, 1)
			checkResaleRefusals(t, g, e)
			got, err = g.ClaimTickets(ctx, e, "dee", 2)
			wantTickets(t, got, err, 5, 6)
			if n := check[int64](t)(g.Claim(ctx, e, "eve")); n != 2 {
				t.Fatalf("eve got %d, not the listed ticket", n)
			}
			if n := check[int64](t)(g.Confirm(ctx, e, "eve")); n != 1 {
				t.Fatalf("eve confirmed %d", n)
			}
			if o := check[*Order](t)(g.Order(ctx, e, "eve")); fmt.Sprint(o.Tickets, o.Gens) != "[2] [2]" {
				t.Fatalf("eve's order %+v", o)
			}
			if n := check[int64](t)(g.Resell(ctx, e, "ann")); n != 1 {
				t.Fatalf("listed %d", n)
			}
			for _, want := range []int64{1, 0} {
				if n := check[int64](t)(g.Unlist(ctx, e, "ann")); n != want {
					t.Fatalf("unlisted %d, want %d", n, want)
				}
			}
			wantResale(t, g, e, 0)
		})
	}
}

// checkResaleRefusals: ticket 2 listed already (and not transferable), a
// held order, a scanned ticket, a seller with nothing, an unlisted ticket.
func checkResaleRefusals(t *testing.T, g *TicketGate, e string) {
	t.Helper()
	ctx := context.Background()
	_, err := g.ResellTickets(ctx, e, "ann", []int64{2})
	wantErr(t, err, ErrListed)
	_, err = g.Transfer(ctx, e, "ann", "zoe")
	wantErr(t, err, ErrListed)
	_, err = g.Resell(ctx, e, "cy")
	wantErr(t, err, ErrNotSold)
	_, err = g.Resell(ctx, e, "ben")
	wantErr(t, err, ErrUsed)
	_, err = g.Resell(ctx, e, "nobody")
	wantErr(t, err, ErrNoHold)
	_, err = g.UnlistTickets(ctx, e, "ann", []int64{1})
	wantErr(t, err, ErrNotListed)
}

func wantResale(t *testing.T, g *TicketGate, e string, want int64) {
	t.Helper()
	if s := check[*Status](t)(g.Status(context.Background(), e)); s.Resale != want {
		t.Fatalf("resale %d, want %d", s.Resale, want)
	}
}
