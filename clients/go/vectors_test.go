// Every vector of clients/vectors.json through go-redis over RESP2 and RESP3:
// the wrapper must send the vector's command and turn the recorded reply into
// its typed value (or *Error with the right code, message and sentinel).

package ticketgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

type vectorFile struct {
	Format  int      `json:"format"`
	Vectors []vector `json:"vectors"`
}

type vector struct {
	Name    string                 `json:"name"`
	Command []string               `json:"command"`
	Call    *vectorCall            `json:"call"`
	Resp2   string                 `json:"resp2"`
	Resp3   string                 `json:"resp3"`
	Expect  map[string]interface{} `json:"expect"`
}

type vectorCall struct {
	Method  string                 `json:"method"`
	Args    []interface{}          `json:"args"`
	Options map[string]interface{} `json:"options"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	path := os.Getenv("TICKETGATE_VECTORS")
	if path == "" {
		path = "../vectors.json"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file vectorFile
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if file.Format != 1 || len(file.Vectors) == 0 {
		t.Fatalf("unexpected vectors file: format %d, %d vectors", file.Format, len(file.Vectors))
	}
	return file.Vectors
}

func TestVectors(t *testing.T) {
	vectors := loadVectors(t)
	stub := startStub(t)
	for _, protocol := range []int{2, 3} {
		rdb := redis.NewClient(&redis.Options{Addr: stub.addr(), Protocol: protocol})
		t.Cleanup(func() { _ = rdb.Close() })
		gate := New(rdb)
		for _, v := range vectors {
			if v.Call == nil {
				continue
			}
			raw := v.Resp2
			if protocol == 3 {
				raw = v.Resp3
			}
			t.Run(fmt.Sprintf("resp%d/%s", protocol, v.Name), func(t *testing.T) {
				stub.replyWith(raw)
				got, err := run(context.Background(), gate, v.Call)
				checkResult(t, v.Expect, got, err)
				if sent := stub.lastCommand(); !reflect.DeepEqual(sent, v.Command) {
					t.Errorf("sent %q, want %q", sent, v.Command)
				}
			})
		}
	}
}

// TestErrorLines maps every recorded error line, including those no method sends.
func TestErrorLines(t *testing.T) {
	for _, v := range loadVectors(t) {
		if v.Expect["kind"] != "error" {
			continue
		}
		line := strings.TrimSuffix(strings.TrimPrefix(v.Resp2, "-"), "\r\n")
		checkResult(t, v.Expect, nil, parseError(line))
	}
}

func checkResult(t *testing.T, expect map[string]interface{}, got map[string]interface{}, err error) {
	t.Helper()
	if expect["kind"] == "error" {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("want error %v, got %v / %v", expect, got, err)
		}
		if e.Code != expect["code"] || e.Message != expect["message"] {
			t.Errorf("got %q %q, want %v %v", e.Code, e.Message, expect["code"], expect["message"])
		}
		if !errors.Is(err, &Error{Code: e.Code}) || (e.Code == "SOLDOUT") != errors.Is(err, ErrSoldOut) {
			t.Errorf("errors.Is does not match the code of %v", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error %v", err)
	}
	if !reflect.DeepEqual(normalise(expect), normalise(got)) {
		t.Errorf("got %v, want %v", got, expect)
	}
}

// normalise passes a value through JSON, so that typed results compare with
// the vectors' numbers.
func normalise(v interface{}) interface{} {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out interface{}
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

// run calls the wrapper method a vector names and renders its typed result
// as the vectors' {"kind", "value"}.
func run(ctx context.Context, g *TicketGate, call *vectorCall) (map[string]interface{}, error) {
	event := call.Args[0].(string)
	user := ""
	if s, ok := call.Args[len(call.Args)-1].(string); ok && len(call.Args) > 1 {
		user = s
	}
	switch call.Method {
	case "init":
		return kind("ok", nil), g.Init(ctx, event, int64(call.Args[1].(float64)), initOptionsOf(call.Options)...)
	case "open":
		return kind("ok", nil), g.Open(ctx, event)
	case "close":
		return kind("ok", nil), g.Close(ctx, event)
	case "claim":
		return runClaim(ctx, g, event, user, call.Options)
	case "status":
		s, err := g.Status(ctx, event)
		return kind("status", statusValue(s)), err
	case "order":
		o, err := g.Order(ctx, event, user)
		if o == nil {
			return kind("nil", nil), err
		}
		value := map[string]interface{}{"tickets": o.Tickets, "state": o.State, "expires_at": o.ExpiresAt}
		if o.Seats != nil {
			value["seats"] = o.Seats
		}
		value["gens"] = o.Gens
		return kind("order", value), err
	case "layout":
		l, err := g.Layout(ctx, event)
		if l == nil {
			return kind("nil", nil), err
		}
		return kind("layout", l), err
	case "seatmap":
		m, ok, err := g.Seatmap(ctx, event)
		if !ok {
			return kind("nil", nil), err
		}
		return kind("seatmap", m), err
	case "drop":
		n, err := g.Drop(ctx, event, call.Options["force"] == true)
		return kind("integer", n), err
	case "allocate", "release", "allocations":
		return runAllocation(ctx, g, call.Method, event, user, call.Options)
	case "transfer":
		from := call.Args[1].(string)
		if ids := idsOf(call.Options["tickets"]); ids != nil {
			n, err := g.TransferTickets(ctx, event, from, user, ids)
			return kind("integer", n), err
		}
		n, err := g.Transfer(ctx, event, from, user)
		return kind("integer", n), err
	case "resell":
		return runResale(ctx, g.Resell, g.ResellTickets, event, user, call.Options)
	case "unlist":
		return runResale(ctx, g.Unlist, g.UnlistTickets, event, user, call.Options)
	case "scan":
		ticket, gen := int64(call.Args[1].(float64)), int64(call.Args[2].(float64))
		return kind("ok", nil), g.Scan(ctx, event, ticket, gen, text(call.Options["gate"]))
	}
	return runUserCall(ctx, g, call.Method, event, user, call.Options)
}

func runUserCall(ctx context.Context, g *TicketGate, method, event, user string, options map[string]interface{}) (map[string]interface{}, error) {
	var n int64
	var present bool
	var err error
	switch method {
	case "confirm":
		n, err = g.Confirm(ctx, event, user)
		return kind("integer", n), err
	case "cancel":
		n, present, err = g.Cancel(ctx, event, user)
		return optional("ticket", n, present), err
	case "holder":
		n, present, err = g.Holder(ctx, event, user)
		return optional("ticket", n, present), err
	case "wait":
		if count, ok := options["count"].(float64); ok {
			n, err = g.WaitTickets(ctx, event, user, int(count))
		} else {
			n, err = g.Wait(ctx, event, user)
		}
		return kind("integer", n), err
	case "leave":
		left, err := g.Leave(ctx, event, user)
		return kind("bool", left), err
	case "position":
		n, present, err = g.Position(ctx, event, user)
		return optional("integer", n, present), err
	}
	return nil, fmt.Errorf("unknown method %q", method)
}

func runClaim(ctx context.Context, g *TicketGate, event, user string, options map[string]interface{}) (map[string]interface{}, error) {
	var opts []ClaimOption
	if hold, ok := options["hold"].(float64); ok {
		opts = append(opts, Hold(time.Duration(hold)*time.Millisecond))
	}
	opts = append(opts, seatOptionsOf(options)...)
	if from, ok := options["from"].(string); ok {
		opts = append([]ClaimOption{From(from, text(options["key"]))}, opts...)
	}
	if ids := idsOf(options["seats"]); ids != nil {
		tickets, err := g.ClaimSeats(ctx, event, user, ids, opts...)
		return kind("tickets", tickets), err
	}
	if count, ok := options["count"].(float64); ok {
		tickets, err := g.ClaimTickets(ctx, event, user, int(count), opts...)
		return kind("tickets", tickets), err
	}
	ticket, err := g.Claim(ctx, event, user, opts...)
	return kind("ticket", ticket), err
}

func runAllocation(ctx context.Context, g *TicketGate, method, event, name string, options map[string]interface{}) (map[string]interface{}, error) {
	seats := idsOf(options["seats"])
	count, counted := options["count"].(float64)
	switch {
	case method == "allocations":
		all, err := g.Allocations(ctx, event)
		if len(all) == 0 {
			return kind("allocations", []interface{}{}), err
		}
		return kind("allocations", all), err
	case method == "allocate":
		o := AllocateOptions{Key: text(options["key"]), Section: text(options["section"]), Category: text(options["category"])}
		if release, ok := options["release"].(float64); ok {
			o.Release = time.UnixMilli(int64(release))
		}
		if seats != nil {
			tickets, err := g.AllocateSeats(ctx, event, name, seats, o)
			return kind("tickets", tickets), err
		}
		tickets, err := g.Allocate(ctx, event, name, int(count), o)
		return kind("tickets", tickets), err
	case seats != nil:
		n, err := g.ReleaseSeats(ctx, event, name, seats)
		return kind("integer", n), err
	case counted:
		n, err := g.ReleaseTickets(ctx, event, name, int(count))
		return kind("integer", n), err
	}
	n, err := g.Release(ctx, event, name)
	return kind("integer", n), err
}

func text(v interface{}) string {
	s, _ := v.(string)
	return s
}

// idsOf reads a vector's seat ids; nil when there are none.
// runResale calls all (no TICKETS option) or some (the tickets given).
func runResale(ctx context.Context,
	all func(context.Context, string, string) (int64, error),
	some func(context.Context, string, string, []int64) (int64, error),
	event, user string, options map[string]interface{}) (map[string]interface{}, error) {
	if ids := idsOf(options["tickets"]); ids != nil {
		n, err := some(ctx, event, user, ids)
		return kind("integer", n), err
	}
	n, err := all(ctx, event, user)
	return kind("integer", n), err
}

func idsOf(v interface{}) []int64 {
	seats, ok := v.([]interface{})
	if !ok {
		return nil
	}
	ids := make([]int64, len(seats))
	for i, id := range seats {
		ids[i] = int64(id.(float64))
	}
	return ids
}

// seatOptionsOf gives the seat options in reverse, to show they are sent in
// the documented order whatever the order given.
func seatOptionsOf(options map[string]interface{}) []ClaimOption {
	var opts []ClaimOption
	if options["split"] == true {
		opts = append(opts, Split())
	}
	if n, ok := options["accessible"].(float64); ok {
		opts = append(opts, Accessible(int(n)))
	}
	if c, ok := options["category"].(string); ok {
		opts = append(opts, InCategory(c))
	}
	if s, ok := options["section"].(string); ok {
		opts = append(opts, InSection(s))
	}
	return opts
}

func initOptionsOf(options map[string]interface{}) []InitOption {
	var opts []InitOption
	ms := func(name string) (int64, bool) {
		v, ok := options[name].(float64)
		return int64(v), ok
	}
	if v, ok := ms("opens"); ok {
		opts = append(opts, OpensAt(time.UnixMilli(v)))
	}
	if v, ok := ms("closes"); ok {
		opts = append(opts, ClosesAt(time.UnixMilli(v)))
	}
	if v, ok := ms("hold"); ok {
		opts = append(opts, DefaultHold(time.Duration(v)*time.Millisecond))
	}
	if v, ok := ms("limit"); ok {
		opts = append(opts, Limit(int(v)))
	}
	if v, ok := ms("offer"); ok {
		opts = append(opts, Offer(time.Duration(v)*time.Millisecond))
	}
	if options["draw"] == true {
		opts = append(opts, Draw())
	}
	if v, ok := ms("transfer_until"); ok {
		opts = append(opts, TransferUntil(time.UnixMilli(v)))
	}
	if v, ok := ms("admit"); ok {
		opts = append(opts, Admit(int(v)))
	}
	if layout, ok := options["seats"].(string); ok {
		opts = append(opts, Seats(layout))
	}
	return opts
}

func statusValue(s *Status) map[string]interface{} {
	if s == nil {
		return nil
	}
	value := map[string]interface{}{
		"total": s.Total, "remaining": s.Remaining, "claimed": s.Claimed, "status": s.State,
		"opens_at": s.OpensAt, "closes_at": s.ClosesAt, "unsynced": s.Unsynced,
		"held": s.Held, "waiting": s.Waiting, "incarnation": s.Incarnation,
	}
	if s.Draw != nil {
		value["draw"] = *s.Draw
	}
	if s.Seed != nil {
		value["seed"] = *s.Seed
	}
	if s.Admit != nil {
		value["admit"] = *s.Admit
	}
	if s.Categories != nil {
		categories := map[string]interface{}{}
		for _, c := range s.Categories {
			categories[c.Category] = c.Free
		}
		value["categories"] = categories
	}
	if s.Accessible != nil {
		value["accessible"] = *s.Accessible
	}
	if s.Allocated != nil {
		value["allocated"] = *s.Allocated
	}
	if s.Resale != 0 { // STATUS sends it only when some are listed
		value["resale"] = s.Resale
	}
	return value
}

func optional(name string, n int64, present bool) map[string]interface{} {
	if !present {
		return kind("nil", nil)
	}
	return kind(name, n)
}

func kind(name string, value interface{}) map[string]interface{} {
	out := map[string]interface{}{"kind": name}
	if value != nil {
		out["value"] = value
	}
	return out
}
