// Command searchtime times archive.Search on a database that is already filled (one kept
// by scalebench -keep, say): each query given as an argument, run -n times one after the
// other by each of -clients concurrent clients, with its total, page length and min /
// median / p99 / max time over all the runs. Two builds of it, run alternately on one
// database, compare two versions of the search on the same data.
//
//	go run ./bench/searchtime -db 'postgres://…' 'word' 'word|5000' 'word|0|2024-06-01|30'
//	go run ./bench/searchtime -db 'postgres://…' -clients 8 -n 20 'word'
//
// A query is text|offset|first day|days: the words, the page's offset, and a date window
// of that many days from that day (UTC). Among the words, from=ADDRESS and to=ADDRESS (or
// to=@domain) set the query's sender and recipient instead of being searched as text.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/bench/internal/benchenv"
	"github.com/mailledger/mailledger/database"
)

func main() {
	url := flag.String("db", "", "database URL (sqlite://, postgres:// or mysql://)")
	runs := flag.Int("n", 7, "runs of each query")
	tenant := flag.String("tenant", "default", "tenant searched")
	clients := flag.Int("clients", 1, "concurrent clients, each running every query -n times")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the timed queries to this file")
	mutexProfile := flag.String("mutexprofile", "", "write a profile of the contended mutexes to this file")
	readers := flag.Int("readers", 0, "connections of the readers' pool (0: database.Open's)")
	flag.Parse()
	if *url == "" || flag.NArg() == 0 || *runs < 1 || *clients < 1 {
		log.Fatal("usage: searchtime -db URL [-n RUNS] [-clients N] QUERY...")
	}
	db, err := database.Open(*url)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if *readers > 0 {
		db.SetMaxOpenConns(*readers)
		db.SetMaxIdleConns(*readers)
	}
	// Search reads no message file: an empty store and a fresh keyring will do.
	dir, err := os.MkdirTemp("", "searchtime")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	blobs, err := archive.NewLocalStore(filepath.Join(dir, "store"))
	if err != nil {
		log.Fatal(err)
	}
	keys, err := archive.LoadOrCreateKeyring(filepath.Join(dir, "keys"))
	if err != nil {
		log.Fatal(err)
	}
	arc, err := archive.New(db, blobs, keys, archive.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	stopProfile, err := benchenv.StartCPUProfile(*cpuProfile)
	if err != nil {
		log.Fatal(err)
	}
	defer stopProfile()
	if *mutexProfile != "" {
		runtime.SetMutexProfileFraction(1)
		defer writeProfile("mutex", *mutexProfile)
	}
	for _, arg := range flag.Args() {
		q, err := parseQuery(*tenant, arg)
		if err != nil {
			log.Fatalf("%q: %v", arg, err)
		}
		times, total, page := timeQuery(ctx, arc, q, *clients, *runs)
		slices.Sort(times)
		fmt.Printf("%-40s total %6d page %3d  min %7.1f ms  median %7.1f ms  p99 %7.1f ms  max %7.1f ms\n", arg, total, page,
			millis(times[0]), millis(times[len(times)/2]), millis(times[(len(times)*99+99)/100-1]), millis(times[len(times)-1]))
	}
}

// timeQuery runs q runs times on each of clients goroutines and returns every run's time,
// and the total and page length of the last answer.
func timeQuery(ctx context.Context, arc *archive.Archive, q archive.Query, clients, runs int) (times []time.Duration, total, page int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for range runs {
				start := time.Now()
				msgs, n, err := arc.Search(ctx, q)
				if err != nil {
					log.Fatalf("%+v: %v", q, err)
				}
				took := time.Since(start)
				mu.Lock()
				times, total, page = append(times, took), n, len(msgs)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return times, total, page
}

// parseQuery reads text|offset|first day|days.
func parseQuery(tenant, arg string) (archive.Query, error) {
	f := strings.Split(arg, "|")
	q := archive.Query{Tenant: tenant, Limit: 50}
	var words []string
	for _, w := range strings.Fields(f[0]) {
		if a, ok := strings.CutPrefix(w, "from="); ok {
			q.From = a
		} else if a, ok := strings.CutPrefix(w, "to="); ok {
			q.To = a
		} else {
			words = append(words, w)
		}
	}
	q.Text = strings.Join(words, " ")
	var err error
	if len(f) > 1 {
		if q.Offset, err = strconv.Atoi(f[1]); err != nil {
			return q, fmt.Errorf("offset: %w", err)
		}
	}
	if len(f) > 3 {
		from, err := time.Parse(time.DateOnly, f[2])
		if err != nil {
			return q, fmt.Errorf("first day: %w", err)
		}
		days, err := strconv.Atoi(f[3])
		if err != nil {
			return q, fmt.Errorf("days: %w", err)
		}
		q.DateFrom, q.DateTo = from, from.AddDate(0, 0, days)
	}
	return q, nil
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// writeProfile writes the named runtime profile (mutex, block) to path.
func writeProfile(name, path string) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		log.Fatal(err)
	}
}
