// Seated events: the claim options of best available, picked seats
// (ClaimSeats), the layout (TICKET.LAYOUT) that names seat ids, and the seat
// map (TICKET.SEATMAP).

package ticketgate

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// Seats makes Init create a seated event: layout is the layout's JSON (see
// the module's docs/commands.md), total its number of seats.
func Seats(layout string) InitOption {
	return func(o *initOptions) { o.layout = &layout }
}

// InSection restricts a seated claim to the rows of one section.
func InSection(name string) ClaimOption {
	return func(o *claimOptions) { o.section = &name }
}

// InCategory restricts a seated claim to the rows of one category.
func InCategory(name string) ClaimOption {
	return func(o *claimOptions) { o.category = &name }
}

// Accessible makes a seated claim take at least n wheelchair spaces (without
// it, none are taken).
func Accessible(n int) ClaimOption {
	return func(o *claimOptions) { o.accessible = &n }
}

// Split lets a seated claim take the best single seats when count seats are
// not together.
func Split() ClaimOption {
	return func(o *claimOptions) { o.split = true }
}

// ClaimSeats takes exactly these seats (ids, see Layout) of a seated event:
// ErrTaken if one is held or sold, ErrOrphan if they would leave a single
// seat alone that another pick of the row would not. Of the options Hold
// and From apply.
func (t *TicketGate) ClaimSeats(ctx context.Context, event, user string, seats []int64, opts ...ClaimOption) ([]int64, error) {
	args := withOptions([]interface{}{"ticket.claim", event, user}, opts)
	return t.tickets(ctx, withSeats(args, seats)...)
}

// withSeats appends SEATS id ...: last, as the module takes every id after it.
func withSeats(args []interface{}, seats []int64) []interface{} {
	args = append(args, "SEATS")
	for _, id := range seats {
		args = append(args, strconv.FormatInt(id, 10))
	}
	return args
}

// Layout returns a seated event's layout, or nil when the event is not seated.
func (t *TicketGate) Layout(ctx context.Context, event string) (*Layout, error) {
	reply, err := t.do(ctx, "ticket.layout", event)
	if err != nil || reply == nil {
		return nil, err
	}
	text, ok := reply.(string)
	if !ok {
		return nil, unexpected("the layout's JSON", reply)
	}
	var layout Layout
	if err := json.Unmarshal([]byte(text), &layout); err != nil {
		return nil, fmt.Errorf("ticketgate: the layout: %w", err)
	}
	return &layout, nil
}

// Seatmap returns one byte per seat id (index id-1): '.' free, 'h' held,
// 's' sold, 'a' free in an allocation; false when the event is not seated.
func (t *TicketGate) Seatmap(ctx context.Context, event string) (string, bool, error) {
	reply, err := t.do(ctx, "ticket.seatmap", event)
	if err != nil || reply == nil {
		return "", false, err
	}
	text, ok := reply.(string)
	if !ok {
		return "", false, unexpected("the seat map", reply)
	}
	return text, true, nil
}

// Layout is a seated event's layout as stored: seat ids 1..Total() in
// layout order (section, row, position; blocked positions skipped).
type Layout struct {
	Sections []Section `json:"sections"`
}

// Section is one section of a Layout.
type Section struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	Rows     []Row  `json:"rows"`
}

// Row is one row of a Section, every default filled in.
type Row struct {
	Name       string  `json:"name"`
	Seats      int     `json:"seats"`      // positions, blocked ones included
	First      int64   `json:"first"`      // the label of position 1
	Blocked    []int   `json:"blocked"`    // positions with no seat
	Accessible []int   `json:"accessible"` // wheelchair spaces (positions)
	Rank       int64   `json:"rank"`       // lower is better
	Center     float64 `json:"center"`     // the best position
	Category   string  `json:"category"`
	FirstID    int64   `json:"first_id"` // the seat id of its first seat
}

// Seat is where a seat id is.
type Seat struct {
	ID         int64
	Section    string
	Row        string
	Position   int // 1-based, in the row
	Label      int64
	Category   string
	Accessible bool
}

// Name is the seat's name, <section>-<row>-<label> (A-2-103).
func (s Seat) Name() string {
	return fmt.Sprintf("%s-%s-%d", s.Section, s.Row, s.Label)
}

// Total is the number of seats.
func (l *Layout) Total() int64 {
	var n int64
	for _, s := range l.Sections {
		for _, r := range s.Rows {
			n += int64(r.Seats - len(r.Blocked))
		}
	}
	return n
}

// Categories lists every category, in layout order.
func (l *Layout) Categories() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range l.Sections {
		for _, r := range s.Rows {
			if !seen[r.Category] {
				seen[r.Category] = true
				out = append(out, r.Category)
			}
		}
	}
	return out
}

// Seat returns the seat of an id, and false for an id not in the layout.
func (l *Layout) Seat(id int64) (Seat, bool) {
	for _, s := range l.Sections {
		for _, r := range s.Rows {
			n := id - r.FirstID // seats before it in the row
			if n < 0 || n >= int64(r.Seats-len(r.Blocked)) {
				continue
			}
			position := r.position(int(n))
			return Seat{
				ID: id, Section: s.Name, Row: r.Name, Position: position,
				Label: r.First + int64(position) - 1, Category: r.Category,
				Accessible: contains(r.Accessible, position),
			}, true
		}
	}
	return Seat{}, false
}

// SeatName names a seat id (A-2-103); "" for an id not in the layout.
func (l *Layout) SeatName(id int64) string {
	seat, ok := l.Seat(id)
	if !ok {
		return ""
	}
	return seat.Name()
}

// position is the position of the row's n-th seat (0-based), blocked skipped.
func (r *Row) position(n int) int {
	for p := 1; p <= r.Seats; p++ {
		if contains(r.Blocked, p) {
			continue
		}
		if n == 0 {
			return p
		}
		n--
	}
	return 0
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
