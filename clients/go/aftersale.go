// After the sale: a sold ticket changes hands (Transfer, each moved ticket
// a generation up, Order.Gens) and is admitted at the door once (Scan).
// A ticket's door credential is (event, ticket, gen).

package ticketgate

import (
	"context"
	"strconv"
)

// Transfer gives all of from's sold tickets to to in one step, each a
// generation up, and returns how many moved. ErrNotSold (from's order is
// held, or to holds a held one), ErrUsed (a ticket was scanned), ErrLimit
// (to's), ErrClosed (after the event's TRANSFER_UNTIL), ErrNoHold (from
// holds nothing), ErrListed (a ticket is listed for resale).
func (t *TicketGate) Transfer(ctx context.Context, event, from, to string) (int64, error) {
	return t.integer(ctx, "ticket.transfer", event, from, to)
}

// TransferTickets is Transfer of these tickets of from's only (ErrNotSold
// for one that is not from's).
func (t *TicketGate) TransferTickets(ctx context.Context, event, from, to string, tickets []int64) (int64, error) {
	args := []interface{}{"ticket.transfer", event, from, to, "TICKETS"}
	for _, id := range tickets {
		args = append(args, strconv.FormatInt(id, 10))
	}
	return t.integer(ctx, args...)
}

// Scan admits ticket at generation gen at the door (gate names the gate;
// "": not sent). Only its first scan at its current generation succeeds:
// ErrUsed when it was scanned before (the message says when and where),
// ErrStale when it was transferred since (an old credential), ErrNotSold
// when it is free, held or listed.
func (t *TicketGate) Scan(ctx context.Context, event string, ticket, gen int64, gate string) error {
	args := []interface{}{"ticket.scan", event, strconv.FormatInt(ticket, 10), strconv.FormatInt(gen, 10)}
	if gate != "" {
		args = append(args, "GATE", gate)
	}
	return t.ok(ctx, args...)
}
