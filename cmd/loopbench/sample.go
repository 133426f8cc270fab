//go:build unix

package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
)

// cmdSample prints a deterministic sample of question ids, stratified by kind
// (stratify documents the rule): the ids, comma-separated, on stdout (for
// brief --qids); each kind's share on stderr.
func cmdSample(args []string) error {
	fs := flag.NewFlagSet("sample", flag.ContinueOnError)
	dataset := fs.String("dataset", "", "the dataset folder (queries.json)")
	n := fs.Int("n", 12, "how many questions")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := need("dataset", *dataset); err != nil {
		return err
	}
	d, err := loadDataset(*dataset)
	if err != nil {
		return err
	}
	if *n <= 0 || *n > len(d.Queries) {
		return usageErr("--n: want 1 to %d", len(d.Queries))
	}
	picked := stratify(d.Queries, *n)
	ids := make([]string, len(picked))
	byKind := map[string][]string{}
	for i, q := range picked {
		ids[i] = q.ID
		byKind[q.Kind] = append(byKind[q.Kind], q.ID)
	}
	fmt.Println(strings.Join(ids, ","))
	for _, k := range d.kinds() {
		fmt.Fprintf(os.Stderr, "  %-14s %d of %2d: %s\n", k, len(byKind[k]), countKind(d.Queries, k), strings.Join(byKind[k], " "))
	}
	return nil
}

func countKind(qs []Query, kind string) int {
	n := 0
	for _, q := range qs {
		if q.Kind == kind {
			n++
		}
	}
	return n
}

// stratify picks n questions, deterministically:
//
//  1. Each kind's share is n × (its questions ÷ all questions), rounded by
//     largest remainder: every kind gets the floor of its share, at least one
//     when n is at least the number of kinds, and the seats left go to the
//     largest fractional parts (ties: the larger kind, then the kind's name).
//     When the at-least-one rule overshoots, seats are taken back from the
//     kinds with the most seats (ties: the smaller fractional part, then the
//     name, last first).
//  2. Within a kind, in queries.json order, the k of its m questions at
//     positions floor((j + 0.5) × m / k), j = 0..k-1: evenly spread, never
//     the first question by default.
//  3. The sample is listed in queries.json order.
func stratify(qs []Query, n int) []Query {
	var kinds []string
	members := map[string][]int{}
	for i, q := range qs {
		if _, ok := members[q.Kind]; !ok {
			kinds = append(kinds, q.Kind)
		}
		members[q.Kind] = append(members[q.Kind], i)
	}
	sort.Strings(kinds)
	total := len(qs)
	seats := map[string]int{}
	frac := map[string]float64{}
	sum := 0
	for _, k := range kinds {
		share := float64(n) * float64(len(members[k])) / float64(total)
		seats[k] = int(math.Floor(share + 1e-9))
		frac[k] = share - float64(seats[k])
		if n >= len(kinds) && seats[k] == 0 {
			seats[k] = 1
			frac[k] = -1 // already rounded up
		}
		sum += seats[k]
	}
	order := append([]string{}, kinds...)
	sort.SliceStable(order, func(a, b int) bool {
		ka, kb := order[a], order[b]
		if frac[ka] != frac[kb] {
			return frac[ka] > frac[kb]
		}
		if len(members[ka]) != len(members[kb]) {
			return len(members[ka]) > len(members[kb])
		}
		return ka < kb
	})
	for i := 0; sum < n; i = (i + 1) % len(order) {
		k := order[i]
		if seats[k] < len(members[k]) {
			seats[k]++
			sum++
		}
	}
	for sum > n {
		// take back from the kind with the most seats (above one)
		best := ""
		for j := len(order) - 1; j >= 0; j-- {
			k := order[j]
			if seats[k] > 1 && (best == "" || seats[k] > seats[best]) {
				best = k
			}
		}
		if best == "" {
			break
		}
		seats[best]--
		sum--
	}
	chosen := map[int]bool{}
	for _, k := range kinds {
		m, kk := len(members[k]), seats[k]
		for j := 0; j < kk; j++ {
			chosen[members[k][int(math.Floor((float64(j)+0.5)*float64(m)/float64(kk)))]] = true
		}
	}
	var out []Query
	for i, q := range qs {
		if chosen[i] {
			out = append(out, q)
		}
	}
	return out
}
