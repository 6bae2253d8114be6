// Command claimbench measures claims/s through the ticketgate wrapper against
// raw ticket.claim sent with rdb.Do from the same go-redis client in the same
// run: concurrent goroutines on one client, rounds alternating wrapper and
// raw (the order swapping each round), medians compared.
//
//	python3 clients/testenv.py -- bash -c 'cd clients/go && go run ./cmd/claimbench'
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	ticketgate "github.com/ticketgate/ticketgate/clients/go"
)

const (
	workers        = 32
	claimsPerRound = 8000
	rounds         = 15
)

var users atomic.Int64

type claimFunc func(ctx context.Context, event, user string) error

func main() {
	ctx := context.Background()
	targets := map[string]redis.UniversalClient{}
	if url := os.Getenv("TICKETGATE_TEST_REDIS"); url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			fail(err)
		}
		targets["standalone"] = redis.NewClient(opt)
	}
	if nodes := os.Getenv("TICKETGATE_TEST_CLUSTER"); nodes != "" {
		targets["cluster"] = redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(nodes, ",")})
	}
	if len(targets) == 0 {
		fail(fmt.Errorf("set TICKETGATE_TEST_REDIS or TICKETGATE_TEST_CLUSTER (run through clients/testenv.py)"))
	}
	for _, name := range []string{"standalone", "cluster"} {
		if rdb, ok := targets[name]; ok {
			if err := compare(ctx, name, rdb); err != nil {
				fail(err)
			}
			_ = rdb.Close()
		}
	}
}

func compare(ctx context.Context, name string, rdb redis.UniversalClient) error {
	g := ticketgate.New(rdb)
	event := fmt.Sprintf("bench-go-%d", time.Now().UnixNano())
	if err := g.Init(ctx, event, 2_000_000_000); err != nil {
		return err
	}
	wrapped := func(ctx context.Context, e, u string) error { _, err := g.Claim(ctx, e, u); return err }
	raw := func(ctx context.Context, e, u string) error { return rdb.Do(ctx, "ticket.claim", e, u).Err() }
	var wrappedRates, rawRates []float64
	for r := -1; r < rounds; r++ {
		first, second := wrapped, raw
		if r%2 != 0 {
			first, second = raw, wrapped
		}
		a, err := round(ctx, event, first)
		if err != nil {
			return err
		}
		b, err := round(ctx, event, second)
		if err != nil {
			return err
		}
		if r < 0 {
			continue // warm-up
		}
		if r%2 != 0 {
			a, b = b, a
		}
		wrappedRates, rawRates = append(wrappedRates, a), append(rawRates, b)
	}
	w, rw := median(wrappedRates), median(rawRates)
	fmt.Printf("go-redis %s: wrapper %.0f claims/s, raw %.0f claims/s (%+.1f%%); medians of %d rounds of %d claims, %d goroutines\n",
		name, w, rw, 100*(w-rw)/rw, rounds, claimsPerRound, workers)
	_, err := g.Drop(ctx, event, true)
	return err
}

// round runs claimsPerRound claims of fresh users over the workers and
// returns claims per second.
func round(ctx context.Context, event string, claim claimFunc) (float64, error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < claimsPerRound/workers; i++ {
				if err := claim(ctx, event, fmt.Sprintf("u%d", users.Add(1))); err != nil {
					mu.Lock()
					defer mu.Unlock()
					if firstErr == nil {
						firstErr = err
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	return float64(claimsPerRound/workers*workers) / time.Since(start).Seconds(), nil
}

func median(values []float64) float64 {
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	return sorted[len(sorted)/2]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "claimbench:", err)
	os.Exit(1)
}
