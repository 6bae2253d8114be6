// Pure decoding of go-redis's generic replies (int64, string, []interface{},
// map[interface{}]interface{}, nil) into the typed values of each command.
// RESP3 maps and RESP2 flat arrays of name/value pairs decode alike.

package ticketgate

import (
	"fmt"
)

// decodeInt reads an integer reply.
func decodeInt(v interface{}) (int64, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, unexpected("an integer", v)
	}
	return n, nil
}

// decodeTickets reads an array of ticket numbers.
func decodeTickets(v interface{}) ([]int64, error) {
	items, ok := v.([]interface{})
	if !ok {
		return nil, unexpected("an array of tickets", v)
	}
	tickets := make([]int64, len(items))
	for i, item := range items {
		n, err := decodeInt(item)
		if err != nil {
			return nil, err
		}
		tickets[i] = n
	}
	return tickets, nil
}

// fields pairs a RESP3 map or a RESP2 flat array into names and values.
func fields(v interface{}) (map[string]interface{}, error) {
	out := map[string]interface{}{}
	switch reply := v.(type) {
	case map[interface{}]interface{}:
		for name, value := range reply {
			key, ok := name.(string)
			if !ok {
				return nil, unexpected("a field name", name)
			}
			out[key] = value
		}
	case []interface{}:
		if len(reply)%2 != 0 {
			return nil, fmt.Errorf("ticketgate: odd-length field array (%d items)", len(reply))
		}
		for i := 0; i < len(reply); i += 2 {
			key, ok := reply[i].(string)
			if !ok {
				return nil, unexpected("a field name", reply[i])
			}
			out[key] = reply[i+1]
		}
	default:
		return nil, unexpected("a map", v)
	}
	return out, nil
}

// record reads named fields of one reply, remembering the first failure so
// that a decoder reads every field and checks once.
type record struct {
	values map[string]interface{}
	err    error
}

func (r *record) int(name string) int64 {
	value, present := r.values[name]
	if !present {
		r.fail(fmt.Errorf("ticketgate: reply lacks the field %q", name))
		return 0
	}
	n, err := decodeInt(value)
	r.fail(err)
	return n
}

func (r *record) str(name string) string {
	s, ok := r.values[name].(string)
	if !ok {
		r.fail(unexpected(fmt.Sprintf("a string field %q", name), r.values[name]))
	}
	return s
}

// optional reads a string field that may be absent or nil.
func (r *record) optional(name string) *string {
	value := r.values[name]
	if value == nil {
		return nil
	}
	s, ok := value.(string)
	if !ok {
		r.fail(unexpected(fmt.Sprintf("a string field %q", name), value))
		return nil
	}
	return &s
}

// optionalInt reads an integer field that may be absent or nil.
func (r *record) optionalInt(name string) *int64 {
	if r.values[name] == nil {
		return nil
	}
	n := r.int(name)
	return &n
}

func (r *record) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// decodeStatus reads TICKET.STATUS's reply.
func decodeStatus(v interface{}) (*Status, error) {
	values, err := fields(v)
	if err != nil {
		return nil, err
	}
	r := record{values: values}
	s := &Status{
		Total: r.int("total"), Remaining: r.int("remaining"), Claimed: r.int("claimed"),
		State: r.str("status"), OpensAt: r.int("opens_at"), ClosesAt: r.int("closes_at"),
		Unsynced: r.int("unsynced"), Held: r.int("held"), Waiting: r.int("waiting"),
		Incarnation: r.optional("incarnation"), Draw: r.optional("draw"), Seed: r.optional("seed"),
		Admit: r.optionalInt("admit"), Accessible: r.optionalInt("accessible"),
		Allocated: r.optionalInt("allocated"),
	}
	if values["resale"] != nil {
		s.Resale = r.int("resale")
	}
	if values["categories"] != nil {
		s.Categories, err = decodeCategories(values["categories"])
		r.fail(err)
	}
	if r.err != nil {
		return nil, r.err
	}
	return s, nil
}

// decodeOrder reads TICKET.ORDER's reply (nil: the user holds nothing).
func decodeOrder(v interface{}) (*Order, error) {
	if v == nil {
		return nil, nil
	}
	values, err := fields(v)
	if err != nil {
		return nil, err
	}
	r := record{values: values}
	tickets, err := decodeTickets(values["tickets"])
	r.fail(err)
	o := &Order{Tickets: tickets, State: r.str("state"), ExpiresAt: r.int("expires_at")}
	if values["gens"] != nil {
		o.Gens, err = decodeTickets(values["gens"])
		r.fail(err)
	}
	if values["seats"] != nil {
		o.Seats, err = decodeStrings(values["seats"])
		r.fail(err)
	}
	if r.err != nil {
		return nil, r.err
	}
	return o, nil
}

// decodeCategories reads STATUS's categories: category, free, ... (RESP2 and
// RESP3 alike: an array, kept in layout order).
func decodeCategories(v interface{}) ([]CategoryFree, error) {
	items, ok := v.([]interface{})
	if !ok || len(items)%2 != 0 {
		return nil, unexpected("category, free pairs", v)
	}
	out := make([]CategoryFree, 0, len(items)/2)
	for i := 0; i < len(items); i += 2 {
		name, ok := items[i].(string)
		if !ok {
			return nil, unexpected("a category", items[i])
		}
		free, err := decodeInt(items[i+1])
		if err != nil {
			return nil, err
		}
		out = append(out, CategoryFree{Category: name, Free: free})
	}
	return out, nil
}

// decodeStrings reads an array of strings (ORDER's seats).
func decodeStrings(v interface{}) ([]string, error) {
	items, ok := v.([]interface{})
	if !ok {
		return nil, unexpected("an array of strings", v)
	}
	out := make([]string, len(items))
	for i, item := range items {
		if out[i], ok = item.(string); !ok {
			return nil, unexpected("a string", item)
		}
	}
	return out, nil
}

func unexpected(want string, got interface{}) error {
	return fmt.Errorf("ticketgate: expected %s in the reply, got %T %v", want, got, got)
}
