// After the sale: a sold ticket changes hands (Transfer, each moved ticket
// a generation up, Order.Gens), is listed for resale at face value
// (Resell, Unlist; Status.Resale) and is admitted at the door once (Scan).
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
// holds nothing), ErrListed (a ticket is listed for resale: Unlist first).
func (t *TicketGate) Transfer(ctx context.Context, event, from, to string) (int64, error) {
	return t.integer(ctx, "ticket.transfer", event, from, to)
}

// TransferTickets is Transfer of these tickets of from's only (ErrNotSold
// for one that is not from's).
func (t *TicketGate) TransferTickets(ctx context.Context, event, from, to string, tickets []int64) (int64, error) {
	return t.integer(ctx, withTickets([]interface{}{"ticket.transfer", event, from, to}, tickets)...)
}

// Resell lists all of user's sold tickets not listed yet for resale at face
// value and returns how many. They stay user's until a buyer confirms one
// (a generation up); a claim or the waiting list takes a listed ticket once
// no free one fits. ErrListed (all are listed already), ErrNotSold (user's
// order is held), ErrUsed (a ticket was scanned), ErrClosed (after the
// event's TRANSFER_UNTIL), ErrNoHold (user holds nothing).
func (t *TicketGate) Resell(ctx context.Context, event, user string) (int64, error) {
	return t.integer(ctx, "ticket.resell", event, user)
}

// ResellTickets is Resell of these tickets of user's only (ErrNotSold for
// one that is not user's, ErrListed for one listed already).
func (t *TicketGate) ResellTickets(ctx context.Context, event, user string, tickets []int64) (int64, error) {
	return t.integer(ctx, withTickets([]interface{}{"ticket.resell", event, user}, tickets)...)
}

// Unlist takes back all of user's listed tickets that no buyer holds and
// returns how many (0: none listed).
func (t *TicketGate) Unlist(ctx context.Context, event, user string) (int64, error) {
	return t.integer(ctx, "ticket.unlist", event, user)
}

// UnlistTickets is Unlist of these tickets only: ErrNotListed for one that
// is not listed by user, or that a buyer holds.
func (t *TicketGate) UnlistTickets(ctx context.Context, event, user string, tickets []int64) (int64, error) {
	return t.integer(ctx, withTickets([]interface{}{"ticket.unlist", event, user}, tickets)...)
}

// withTickets appends TICKETS and the ids to args (the module takes every
// id after TICKETS, so it goes last).
func withTickets(args []interface{}, tickets []int64) []interface{} {
	args = append(args, "TICKETS")
	for _, id := range tickets {
		args = append(args, strconv.FormatInt(id, 10))
	}
	return args
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
