// The typed replies: Status (TICKET.STATUS) and Order (TICKET.ORDER).

package ticketgate

// Status is an event's state as TICKET.STATUS reports it. Times are unix
// milliseconds (0 = none).
type Status struct {
	Total     int64
	Remaining int64
	Claimed   int64 // held + sold
	State     string
	OpensAt   int64
	ClosesAt  int64
	Unsynced  int64 // log entries not yet drained to MySQL
	Held      int64
	Waiting   int64
	// Optional fields: nil when the server does not report them.
	Incarnation *string
	// A draw event's: Draw the commitment, hex(SHA-256(seed)), from the
	// start; Seed (64 hex digits) once drawn; Admit the most offers per
	// second, when set.
	Draw  *string
	Seed  *string
	Admit *int64
	// A seated event's: free seats per category, in layout order (every
	// category, wheelchair spaces included), and free wheelchair spaces.
	// nil for other events.
	Categories []CategoryFree
	Accessible *int64
	// Free allocated tickets (not in Remaining); nil when there are none.
	Allocated *int64
	// Tickets listed for resale that no buyer holds (in Claimed); 0 when none.
	Resale int64
}

// CategoryFree is one category's free seats (Status.Categories).
type CategoryFree struct {
	Category string
	Free     int64
}

// Drawn reports whether a draw event has drawn (its seed is revealed).
func (s *Status) Drawn() bool { return s.Seed != nil }

// Event states reported in Status.State.
const (
	StateOpen   = "open"
	StateClosed = "closed"
)

// Order is a user's tickets as TICKET.ORDER reports them.
type Order struct {
	Tickets   []int64  // ascending
	State     string   // OrderHeld or OrderSold
	ExpiresAt int64    // unix ms; 0 when sold
	Seats     []string // a seated event's seat names (A-2-103); nil otherwise
	Gens      []int64  // each ticket's generation, in ticket order: 1 at sale, +1 per transfer
}

// Order states reported in Order.State.
const (
	OrderHeld = "held"
	OrderSold = "sold"
)
