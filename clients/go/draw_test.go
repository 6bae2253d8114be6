// Integration test of a draw event against a real redis-server with the
// module (standalone and cluster, as clients/testenv.py announces them): 50
// entrants, OPEN reveals the seed, offers follow the order recomputed here.

package ticketgate

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"
)

// drawnOrder recomputes the draw's order as a buyer would: rank = the first
// 6 bytes (big-endian) of HMAC-SHA256(seed, user id), ties by the id bytes.
func drawnOrder(seed []byte, users []string) []string {
	rank := func(user string) uint64 {
		mac := hmac.New(sha256.New, seed)
		mac.Write([]byte(user))
		var word [8]byte
		copy(word[2:], mac.Sum(nil)[:6])
		return binary.BigEndian.Uint64(word[:])
	}
	order := append([]string(nil), users...)
	sort.Slice(order, func(i, j int) bool {
		ri, rj := rank(order[i]), rank(order[j])
		return ri < rj || ri == rj && bytes.Compare([]byte(order[i]), []byte(order[j])) < 0
	})
	return order
}

func TestDraw(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range backends(t) {
		t.Run(name, func(t *testing.T) {
			g, e := New(rdb), newEvent()
			noErr(t, g.Init(ctx, e, 10, DefaultHold(time.Hour), Draw()))
			before := check[*Status](t)(g.Status(ctx, e))
			if before.State != StateClosed || before.Drawn() || before.Draw == nil || len(*before.Draw) != 64 {
				t.Fatalf("before the draw: %+v", before)
			}
			users := make([]string, 50)
			for i := range users {
				users[i] = fmt.Sprintf("fan-%02d", i)
				if pos := check[int64](t)(g.Wait(ctx, e, users[i])); pos != Entered {
					t.Fatalf("wait %s: %d", users[i], pos)
				}
			}
			if pos, ok, err := g.Position(ctx, e, "fan-07"); err != nil || !ok || pos != Entered {
				t.Fatalf("position before the draw: %d %v %v", pos, ok, err)
			}
			_, err := g.Claim(ctx, e, "fan-07")
			wantErr(t, err, ErrNotOpen)
			noErr(t, g.Open(ctx, e))
			order := checkDrawn(t, g, e, *before.Draw, users)
			checkQueue(t, g, e, order)
		})
	}
}

// checkDrawn: the seed hashes to the commitment and the first 10 of the
// recomputed order hold offers of tickets 1..=10 in rank order.
func checkDrawn(t *testing.T, g *TicketGate, e, commitment string, users []string) []string {
	ctx := context.Background()
	after := check[*Status](t)(g.Status(ctx, e))
	if !after.Drawn() || *after.Draw != commitment || after.Held != 10 || after.Waiting != 40 {
		t.Fatalf("after the draw: %+v", after)
	}
	seed, err := hex.DecodeString(*after.Seed)
	noErr(t, err)
	if digest := sha256.Sum256(seed); hex.EncodeToString(digest[:]) != commitment {
		t.Fatalf("SHA-256(seed) %x is not the commitment %s", digest, commitment)
	}
	order := drawnOrder(seed, users)
	for i, user := range order[:10] {
		o := check[*Order](t)(g.Order(ctx, e, user))
		if o == nil || o.State != OrderHeld || fmt.Sprint(o.Tickets) != fmt.Sprintf("[%d]", i+1) {
			t.Fatalf("offer %d to %s: %+v", i+1, user, o)
		}
	}
	return order
}

// checkQueue: a claim without an offer meets the queue; the offered get theirs.
func checkQueue(t *testing.T, g *TicketGate, e string, order []string) {
	ctx := context.Background()
	_, err := g.Claim(ctx, e, order[10])
	wantErr(t, err, ErrQueue)
	var queue *Error
	if !errors.As(err, &queue) || queue.Message != fmt.Sprintf("event '%s' sells through its queue: TICKET.WAIT", e) {
		t.Fatalf("queue error %v", err)
	}
	if pos, ok, err := g.Position(ctx, e, order[10]); err != nil || !ok || pos != 1 {
		t.Fatalf("position of the next entrant: %d %v %v", pos, ok, err)
	}
	if ticket := check[int64](t)(g.Claim(ctx, e, order[0])); ticket != 1 {
		t.Fatalf("the first drawn claims ticket %d", ticket)
	}
	if pos := check[int64](t)(g.Wait(ctx, e, "late")); pos != 41 {
		t.Fatalf("a joiner after the draw at %d, want 41", pos)
	}
	wantErr(t, g.Init(ctx, e+"-bad", 5, Draw()), ErrInvalid)
	noErr(t, g.Init(ctx, e+"-admit", 5, Offer(time.Hour), Draw(), Admit(20)))
	if s := check[*Status](t)(g.Status(ctx, e+"-admit")); s.Admit == nil || *s.Admit != 20 {
		t.Fatalf("admit: %+v", s)
	}
}
