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
