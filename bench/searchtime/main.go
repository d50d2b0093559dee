// Command searchtime times archive.Search on a database that is already filled (one kept
// by scalebench -keep, say): each query given as an argument, run -n times one after the
// other by each of -clients concurrent clients, with its total, page length and min /
// median / p99 / max time over all the runs. Two builds of it, run alternately on one
// database, compare two versions of the search on the same data.
//
//	go run ./bench/searchtime -db 'postgres://…' 'word' 'word|5000' 'word|0|2024-06-01|30'
//	go run ./bench/searchtime -db 'postgres://…' -clients 8 -n 20 'word'
//
// With -mix FILE it runs instead the queries of FILE, one a line as `kind<TAB>query`
// (what scalebench -print-queries writes), the way scalebench does: -clients goroutines
// each taking the next query as it finishes one, -n rounds of the whole list, and prints
// each kind's min / median / p99 / max over all its runs: a run's search load replayed.
//
//	go run ./bench/scalebench -print-queries 10 -queries 30 > queries.tsv
//	go run ./bench/searchtime -db 'postgres://…' -clients 8 -n 1 -mix queries.tsv
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
	"maps"
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
	mixFile := flag.String("mix", "", "run the kind<TAB>query lines of this file mixed, as scalebench does, and print each kind's times")
	flag.Parse()
	if *url == "" || (flag.NArg() == 0) == (*mixFile == "") || *runs < 1 || *clients < 1 {
		log.Fatal("usage: searchtime -db URL [-n RUNS] [-clients N] QUERY... | -mix FILE")
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
	if *mixFile != "" {
		kinds, qs, err := readMix(*tenant, *mixFile)
		if err != nil {
			log.Fatal(err)
		}
		times := timeMix(ctx, arc, qs, *clients, *runs)
		for _, kind := range slices.Sorted(maps.Keys(kinds)) {
			var ts []time.Duration
			for _, i := range kinds[kind] {
				ts = append(ts, times[i]...)
			}
			printTimes(kind, -1, -1, ts)
		}
		return
	}
	for _, arg := range flag.Args() {
		q, err := parseQuery(*tenant, arg)
		if err != nil {
			log.Fatalf("%q: %v", arg, err)
		}
		times, total, page := timeQuery(ctx, arc, q, *clients, *runs)
		printTimes(arg, total, page, times)
	}
}

// printTimes prints a line of min / median / p99 / max (total and page when not -1).
func printTimes(label string, total, page int, times []time.Duration) {
	slices.Sort(times)
	var counts string
	if total >= 0 {
		counts = fmt.Sprintf("total %6d page %3d", total, page)
	} else {
		counts = fmt.Sprintf("runs %15d", len(times))
	}
	fmt.Printf("%-40s %s  min %7.1f ms  median %7.1f ms  p99 %7.1f ms  max %7.1f ms\n", label, counts,
		millis(times[0]), millis(times[len(times)/2]), millis(times[(len(times)*99+99)/100-1]), millis(times[len(times)-1]))
}

// readMix reads the kind<TAB>query lines of path: the queries, and each kind's indexes
// among them.
func readMix(tenant, path string) (map[string][]int, []archive.Query, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	kinds := map[string][]int{}
	var qs []archive.Query
	for n, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		kind, arg, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, nil, fmt.Errorf("%s:%d: not kind<TAB>query", path, n+1)
		}
		q, err := parseQuery(tenant, arg)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", path, n+1, err)
		}
		kinds[kind] = append(kinds[kind], len(qs))
		qs = append(qs, q)
	}
	return kinds, qs, nil
}

// timeMix runs rounds passes over qs on clients goroutines, each taking the next query as
// it finishes one, and returns each query's times.
func timeMix(ctx context.Context, arc *archive.Archive, qs []archive.Query, clients, rounds int) [][]time.Duration {
	times := make([][]time.Duration, len(qs))
	next := make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := range next {
				start := time.Now()
				if _, _, err := arc.Search(ctx, qs[i]); err != nil {
					log.Fatalf("%+v: %v", qs[i], err)
				}
				took := time.Since(start)
				mu.Lock()
				times[i] = append(times[i], took)
				mu.Unlock()
			}
		})
	}
	for range rounds {
		for i := range qs {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	return times
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
