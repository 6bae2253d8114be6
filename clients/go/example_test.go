// The README's example, compiled with the tests (it needs a server to run).

package ticketgate_test

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
	ticketgate "github.com/ticketgate/ticketgate/clients/go"
)

func Example() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"}) // or redis.NewClusterClient(...)
	tg := ticketgate.New(rdb)
	if err := tg.Init(ctx, "concert", 100, ticketgate.DefaultHold(15*time.Minute)); err != nil && !errors.Is(err, ticketgate.ErrExists) {
		return
	}
	ticket, err := tg.Claim(ctx, "concert", "alice") // held 15 minutes
	switch {
	case errors.Is(err, ticketgate.ErrSoldOut): // 409
	case err == nil:
		_, err = tg.Confirm(ctx, "concert", "alice") // paid: sold
	}
	_, _ = ticket, err
}
