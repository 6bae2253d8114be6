// Errors: the module's error replies (`-CODE message`) as one Go error type
// carrying the code and the server's message, with a sentinel per code for
// errors.Is.

package ticketgate

import (
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Error is an error reply of the module: Code is its first word (SOLDOUT,
// NOEVENT, ...), Message the rest of the server's line.
//
// errors.Is(err, ErrSoldOut) matches any *Error with the same code;
// errors.As(err, &e) gives the code and message.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + " " + e.Message
}

// Is reports whether target is an *Error with the same code (the sentinels
// below carry no message, so the code alone decides).
func (e *Error) Is(target error) bool {
	var other *Error
	return errors.As(target, &other) && other.Code == e.Code
}

// Sentinels, one per code the module replies with.
var (
	ErrInvalid      = &Error{Code: "ERR"}          // malformed input or wrong arity
	ErrNoEvent      = &Error{Code: "NOEVENT"}      // the event does not exist
	ErrExists       = &Error{Code: "EXISTS"}       // INIT of an existing event
	ErrNotOpen      = &Error{Code: "NOTOPEN"}      // a claim before opens_at
	ErrClosed       = &Error{Code: "CLOSED"}       // closed, or past closes_at
	ErrSoldOut      = &Error{Code: "SOLDOUT"}      // fewer free tickets than asked for
	ErrLimit        = &Error{Code: "LIMIT"}        // more tickets than the event's LIMIT
	ErrNotTogether  = &Error{Code: "NOTOGETHER"}   // a seated claim: no count seats together
	ErrTaken        = &Error{Code: "TAKEN"}        // a picked seat is held or sold
	ErrOrphan       = &Error{Code: "ORPHAN"}       // picked seats would leave one alone
	ErrShort        = &Error{Code: "SHORT"}        // ALLOCATE (or RELEASE COUNT) beyond the free stock
	ErrNoKey        = &Error{Code: "NOKEY"}        // a claim FROM an allocation without its key
	ErrNoAllocation = &Error{Code: "NOALLOCATION"} // no allocation of that name
	ErrNoHold       = &Error{Code: "NOHOLD"}       // CONFIRM (or TRANSFER) without a live order
	ErrNotSold      = &Error{Code: "NOTSOLD"}      // TRANSFER or SCAN of a ticket that is not sold
	ErrUsed         = &Error{Code: "USED"}         // SCAN (or TRANSFER) of a ticket scanned already
	ErrStale        = &Error{Code: "STALE"}        // SCAN at an old generation: transferred since
	ErrListed       = &Error{Code: "LISTED"}       // RESELL of a listed ticket, TRANSFER (or CANCEL) of one
	ErrNotListed    = &Error{Code: "NOTLISTED"}    // UNLIST of a ticket not listed by the user, or held by a buyer
	ErrHolding      = &Error{Code: "HOLDING"}      // WAIT by a user who holds tickets
	ErrUnsynced     = &Error{Code: "UNSYNCED"}     // DROP while the log has entries
	ErrWrongType    = &Error{Code: "WRONGTYPE"}    // an event key holds another type
	ErrTryAgain     = &Error{Code: "TRYAGAIN"}     // keys disagree (migration) or restoring
	ErrQueue        = &Error{Code: "QUEUE"}        // a claim without an offer while drawn entrants wait
	ErrNotRestoring = &Error{Code: "NOTRESTORING"} // a restore step without BEGIN
	ErrIncomplete   = &Error{Code: "INCOMPLETE"}   // restore COMMIT before it is whole
	ErrCorrupt      = &Error{Code: "CORRUPT"}      // keys hold values the module never writes
	ErrInternal     = &Error{Code: "INTERNAL"}     // a module bug caught at the boundary
	ErrNoPerm       = &Error{Code: "NOPERM"}       // a command clients may not send
)

// parseError turns a server error line into an *Error: the first word is the
// code when it is all upper-case letters, otherwise the code is ERR.
func parseError(line string) *Error {
	code, message, _ := strings.Cut(line, " ")
	if code == "" || strings.TrimLeft(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return &Error{Code: "ERR", Message: line}
	}
	return &Error{Code: code, Message: message}
}

// translate maps a server error reply to *Error and passes anything else
// (network errors, context cancellation, redis.Nil) through unchanged.
func translate(err error) error {
	var reply redis.Error
	if errors.As(err, &reply) && err != redis.Nil {
		return parseError(reply.Error())
	}
	return err
}
