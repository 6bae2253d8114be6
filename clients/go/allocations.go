// Allocations: stock set aside from public sale (kills, house seats, a
// partner's channel), claimed only From it, released to the public by hand
// or at a set time.

package ticketgate

import (
	"context"
	"strconv"
	"time"
)

// Allocation is one entry of TICKET.ALLOCATIONS (never its key).
type Allocation struct {
	Name    string `json:"name"`
	Free    int64  `json:"free"`    // tickets not claimed yet
	Claimed int64  `json:"claimed"` // tickets claimed from it, held or sold
	Release *int64 `json:"release"` // unix ms it gives its free tickets back; nil: never
}

// AllocateOptions are ALLOCATE's options; zero values are not sent.
type AllocateOptions struct {
	Section  string    // a seated event: only seats of this section (with a count)
	Category string    // a seated event: only seats of this category (with a count)
	Key      string    // the secret a claim From this allocation must give
	Release  time.Time // what is still free then goes back to public sale
}

// From makes a claim take only the free stock of the allocation name, with
// its key when it was made with one ("": none). ErrNoKey without the right
// key, ErrSoldOut (naming it) when it has too few, ErrNoAllocation for an
// unknown name.
func From(name, key string) ClaimOption {
	return func(o *claimOptions) { o.from, o.key = &name, key }
}

// Allocate sets count free tickets aside in the allocation name, out of
// public sale (a seated event: count free seats in SPLIT order, within
// o.Section and o.Category), and returns them, ascending. ErrShort when
// fewer are free (nothing changes); ErrNoKey adding to an allocation made
// with another key. An operator command.
func (t *TicketGate) Allocate(ctx context.Context, event, name string, count int, o AllocateOptions) ([]int64, error) {
	args := []interface{}{"ticket.allocate", event, name, "COUNT", strconv.Itoa(count)}
	return t.tickets(ctx, o.append(args)...)
}

// AllocateSeats sets exactly these free seats (ids) aside in the allocation
// name (ErrTaken if one is not free); as Allocate otherwise.
func (t *TicketGate) AllocateSeats(ctx context.Context, event, name string, seats []int64, o AllocateOptions) ([]int64, error) {
	args := o.append([]interface{}{"ticket.allocate", event, name})
	return t.tickets(ctx, withSeats(args, seats)...)
}

// append adds the options in the order SECTION CATEGORY KEY RELEASE.
func (o AllocateOptions) append(args []interface{}) []interface{} {
	for _, option := range [...]struct{ word, value string }{
		{"SECTION", o.Section}, {"CATEGORY", o.Category}, {"KEY", o.Key},
	} {
		if option.value != "" {
			args = append(args, option.word, option.value)
		}
	}
	if !o.Release.IsZero() {
		args = append(args, "RELEASE", strconv.FormatInt(o.Release.UnixMilli(), 10))
	}
	return args
}

// Release gives all the allocation's free tickets back to public sale, the
// waiting list offered them first, and returns how many. ErrNoAllocation
// for an unknown name. An operator command.
func (t *TicketGate) Release(ctx context.Context, event, name string) (int64, error) {
	return t.integer(ctx, "ticket.release", event, name)
}

// ReleaseTickets releases the count lowest free tickets of the allocation
// (ErrShort when it has fewer).
func (t *TicketGate) ReleaseTickets(ctx context.Context, event, name string, count int) (int64, error) {
	return t.integer(ctx, "ticket.release", event, name, "COUNT", strconv.Itoa(count))
}

// ReleaseSeats releases exactly these free tickets or seats of the allocation.
func (t *TicketGate) ReleaseSeats(ctx context.Context, event, name string, seats []int64) (int64, error) {
	return t.integer(ctx, withSeats([]interface{}{"ticket.release", event, name}, seats)...)
}

// Allocations returns the event's allocations in name order.
func (t *TicketGate) Allocations(ctx context.Context, event string) ([]Allocation, error) {
	reply, err := t.do(ctx, "ticket.allocations", event)
	if err != nil {
		return nil, err
	}
	return decodeAllocations(reply)
}

// decodeAllocations reads [name, free, claimed, release or nil] per allocation.
func decodeAllocations(v interface{}) ([]Allocation, error) {
	items, ok := v.([]interface{})
	if !ok {
		return nil, unexpected("an array of allocations", v)
	}
	out := make([]Allocation, len(items))
	for i, item := range items {
		entry, ok := item.([]interface{})
		if !ok || len(entry) != 4 {
			return nil, unexpected("[name, free, claimed, release]", item)
		}
		name, ok := entry[0].(string)
		if !ok {
			return nil, unexpected("an allocation's name", entry[0])
		}
		a := Allocation{Name: name}
		var err error
		if a.Free, err = decodeInt(entry[1]); err != nil {
			return nil, err
		}
		if a.Claimed, err = decodeInt(entry[2]); err != nil {
			return nil, err
		}
		if entry[3] != nil {
			release, err := decodeInt(entry[3])
			if err != nil {
				return nil, err
			}
			a.Release = &release
		}
		out[i] = a
	}
	return out, nil
}
