// Package ticketgate is a typed client for the ticketgate Redis module over
// go-redis v9: every TICKET.* command as a method taking a context, replies
// as Go types, error replies as *Error (errors.Is(err, ErrSoldOut)).
//
// Every command is sent with its first key position set to the event, so a
// cluster client routes it to the event's slot without COMMAND INFO and
// without a MOVED redirection; go-redis follows MOVED after a reshard.
package ticketgate

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// TicketGate sends TICKET.* commands through a go-redis client: a
// *redis.Client, *redis.ClusterClient, *redis.Ring or any UniversalClient.
// It is safe for concurrent use, like the client it wraps.
type TicketGate struct {
	rdb redis.UniversalClient
}

// New wraps a go-redis client.
func New(rdb redis.UniversalClient) *TicketGate {
	return &TicketGate{rdb: rdb}
}

// InitOption is an option of Init. Options are sent in the order OPENS
// CLOSES HOLD LIMIT OFFER DRAW ADMIT TRANSFER_UNTIL SEATS whatever the order
// they are given in.
type InitOption func(*initOptions)

// initOptions holds each INIT option's value, nil when not given, and a
// seated event's layout (SEATS).
type initOptions struct {
	values [len(initOptionNames)]*int64
	layout *string
}

var initOptionNames = [...]string{"OPENS", "CLOSES", "HOLD", "LIMIT", "OFFER", "DRAW", "ADMIT", "TRANSFER_UNTIL"}

// drawOption is the index of DRAW, the one option sent as a bare flag.
const drawOption = 5

// Entered is what Wait and Position answer for a user who entered a draw
// not yet drawn: no place yet (not a place n >= 1, not 0 = offered).
const Entered int64 = -1

func initOption(index int, value int64) InitOption {
	return func(o *initOptions) { o.values[index] = &value }
}

// OpensAt: claims are refused (ErrNotOpen) before t.
func OpensAt(t time.Time) InitOption { return initOption(0, t.UnixMilli()) }

// ClosesAt: claims are refused (ErrClosed) from t on.
func ClosesAt(t time.Time) InitOption { return initOption(1, t.UnixMilli()) }

// DefaultHold: a claim holds its tickets for d until confirmed (0: a claim is
// a final sale, the default).
func DefaultHold(d time.Duration) InitOption { return initOption(2, d.Milliseconds()) }

// Limit: the most tickets one user may hold (default 1).
func Limit(n int) InitOption { return initOption(3, int64(n)) }

// Offer: how long an offer to the waiting list is held.
func Offer(d time.Duration) InitOption { return initOption(4, d.Milliseconds()) }

// Draw makes a draw event (needs DefaultHold > 0 or Offer): created not yet
// open, it opens and draws the order of those who entered (Wait) at Open or
// at OpensAt.
func Draw() InitOption { return initOption(drawOption, 1) }

// Admit: a draw event's most offers per second (1..=1,000,000).
func Admit(perSecond int) InitOption { return initOption(6, int64(perSecond)) }

// TransferUntil: no Transfer after t (ErrClosed; default ClosesAt; Close
// alone does not stop transfers).
func TransferUntil(t time.Time) InitOption { return initOption(7, t.UnixMilli()) }

// ClaimOption is an option of Claim, ClaimTickets and ClaimSeats. Options
// are sent in the order HOLD SECTION CATEGORY ACCESSIBLE SPLIT FROM KEY
// whatever the order they are given in.
type ClaimOption func(*claimOptions)

// claimOptions holds each CLAIM option, nil (false) when not given.
type claimOptions struct {
	hold       *int64
	section    *string
	category   *string
	accessible *int
	split      bool
	from       *string
	key        string
}

// Hold overrides the event's default hold for this claim (0: a final sale).
func Hold(d time.Duration) ClaimOption {
	ms := d.Milliseconds()
	return func(o *claimOptions) { o.hold = &ms }
}

// do sends one command whose first argument is the event and returns the
// generic reply; server errors become *Error, a nil reply is (nil, nil).
func (t *TicketGate) do(ctx context.Context, args ...interface{}) (interface{}, error) {
	cmd := redis.NewCmd(ctx, args...)
	cmd.SetFirstKeyPos(1)
	_ = t.rdb.Process(ctx, cmd)
	reply, err := cmd.Result()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
		return nil, translate(err)
	}
	return reply, nil
}

// integer sends a command whose reply is an integer.
func (t *TicketGate) integer(ctx context.Context, args ...interface{}) (int64, error) {
	reply, err := t.do(ctx, args...)
	if err != nil {
		return 0, err
	}
	return decodeInt(reply)
}

// tickets sends a command whose reply is an array of tickets.
func (t *TicketGate) tickets(ctx context.Context, args ...interface{}) ([]int64, error) {
	reply, err := t.do(ctx, args...)
	if err != nil {
		return nil, err
	}
	return decodeTickets(reply)
}

// optionalInteger sends a command whose reply is an integer or nil.
func (t *TicketGate) optionalInteger(ctx context.Context, args ...interface{}) (int64, bool, error) {
	reply, err := t.do(ctx, args...)
	if err != nil || reply == nil {
		return 0, false, err
	}
	n, err := decodeInt(reply)
	return n, err == nil, err
}

// ok sends a command whose reply is +OK.
func (t *TicketGate) ok(ctx context.Context, args ...interface{}) error {
	_, err := t.do(ctx, args...)
	return err
}

// Init creates an event of total tickets, numbered 1..=total.
func (t *TicketGate) Init(ctx context.Context, event string, total int64, opts ...InitOption) error {
	var given initOptions
	for _, opt := range opts {
		opt(&given)
	}
	args := []interface{}{"ticket.init", event, strconv.FormatInt(total, 10)}
	for i, value := range given.values {
		switch {
		case value == nil:
		case i == drawOption:
			args = append(args, initOptionNames[i])
		default:
			args = append(args, initOptionNames[i], strconv.FormatInt(*value, 10))
		}
	}
	if given.layout != nil {
		args = append(args, "SEATS", *given.layout)
	}
	return t.ok(ctx, args...)
}

// Open opens the event for claims.
func (t *TicketGate) Open(ctx context.Context, event string) error {
	return t.ok(ctx, "ticket.open", event)
}

// Close closes the event: claims answer ErrClosed, confirmations still work.
func (t *TicketGate) Close(ctx context.Context, event string) error {
	return t.ok(ctx, "ticket.close", event)
}

// Claim takes the lowest free ticket for user and returns it; a user who
// holds tickets gets the lowest of them back and nothing changes. On a
// seated event it takes the best seat (see ClaimTickets).
func (t *TicketGate) Claim(ctx context.Context, event, user string, opts ...ClaimOption) (int64, error) {
	return t.integer(ctx, withOptions([]interface{}{"ticket.claim", event, user}, opts)...)
}

// ClaimTickets takes the count lowest free tickets, all or nothing, and
// returns all of the user's tickets, ascending (a repeat claim returns the
// tickets the user holds already). On a seated event it takes the best
// count seats together (ErrNotTogether if none are), restricted by InSection,
// InCategory, Accessible; Split takes the best single seats instead.
func (t *TicketGate) ClaimTickets(ctx context.Context, event, user string, count int, opts ...ClaimOption) ([]int64, error) {
	args := []interface{}{"ticket.claim", event, user, "COUNT", strconv.Itoa(count)}
	return t.tickets(ctx, withOptions(args, opts)...)
}

func withOptions(args []interface{}, opts []ClaimOption) []interface{} {
	if len(opts) == 0 {
		return args
	}
	var o claimOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.hold != nil {
		args = append(args, "HOLD", strconv.FormatInt(*o.hold, 10))
	}
	if o.section != nil {
		args = append(args, "SECTION", *o.section)
	}
	if o.category != nil {
		args = append(args, "CATEGORY", *o.category)
	}
	if o.accessible != nil {
		args = append(args, "ACCESSIBLE", strconv.Itoa(*o.accessible))
	}
	if o.split {
		args = append(args, "SPLIT")
	}
	if o.from != nil {
		args = append(args, "FROM", *o.from)
		if o.key != "" {
			args = append(args, "KEY", o.key)
		}
	}
	return args
}

// Confirm makes the user's held order sold; it returns the number of
// tickets the user now holds.
func (t *TicketGate) Confirm(ctx context.Context, event, user string) (int64, error) {
	return t.integer(ctx, "ticket.confirm", event, user)
}

// Cancel releases all the user's tickets (every one of a multi-ticket
// order); it returns the lowest one, and false when the user held none.
func (t *TicketGate) Cancel(ctx context.Context, event, user string) (int64, bool, error) {
	return t.optionalInteger(ctx, "ticket.cancel", event, user)
}

// Holder returns the user's lowest ticket, and false when the user holds none.
func (t *TicketGate) Holder(ctx context.Context, event, user string) (int64, bool, error) {
	return t.optionalInteger(ctx, "ticket.holder", event, user)
}

// Order returns the user's order, or nil when the user holds nothing.
func (t *TicketGate) Order(ctx context.Context, event, user string) (*Order, error) {
	reply, err := t.do(ctx, "ticket.order", event, user)
	if err != nil {
		return nil, err
	}
	return decodeOrder(reply)
}

// Status returns the event's counters and state.
func (t *TicketGate) Status(ctx context.Context, event string) (*Status, error) {
	reply, err := t.do(ctx, "ticket.status", event)
	if err != nil {
		return nil, err
	}
	return decodeStatus(reply)
}

// Drop deletes the event's keys and returns how many were deleted; without
// force it refuses (ErrUnsynced) while the log holds undrained entries.
func (t *TicketGate) Drop(ctx context.Context, event string, force bool) (int64, error) {
	args := []interface{}{"ticket.drop", event}
	if force {
		args = append(args, "FORCE")
	}
	return t.integer(ctx, args...)
}

// Wait puts the user on the event's waiting list for one ticket and returns
// the 1-based position, 0 when a ticket was offered at once, or Entered (-1)
// when the user entered a draw not yet drawn.
func (t *TicketGate) Wait(ctx context.Context, event, user string) (int64, error) {
	return t.integer(ctx, "ticket.wait", event, user)
}

// WaitTickets is Wait for count tickets (offered all together).
func (t *TicketGate) WaitTickets(ctx context.Context, event, user string, count int) (int64, error) {
	return t.integer(ctx, "ticket.wait", event, user, "COUNT", strconv.Itoa(count))
}

// Leave takes the user off the waiting list; false when the user was not on it.
func (t *TicketGate) Leave(ctx context.Context, event, user string) (bool, error) {
	n, err := t.integer(ctx, "ticket.leave", event, user)
	return n == 1, err
}

// Position returns the user's place in the waiting list (0: offered,
// Entered: in a draw not yet drawn), and false when the user is not on it.
func (t *TicketGate) Position(ctx context.Context, event, user string) (int64, bool, error) {
	return t.optionalInteger(ctx, "ticket.position", event, user)
}
