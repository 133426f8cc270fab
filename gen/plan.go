package gen

import (
	"fmt"
	"math/rand/v2"
	"path"
	"strconv"
	"strings"
	"time"
)

// The generator works in two passes. The plan (this file) decides, in one
// sequential pass, everything that depends on other notes: clusters, kinds,
// titles, file names, dates, section headings and wikilink targets. Rendering
// (render.go) then writes each note's text from the plan and a random stream of
// its own, so notes can be rendered in parallel and still come out the same.

// ClusterSize is the number of notes a cluster has on average.
const ClusterSize = 50

var (
	firstDay = time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)
	lastDay  = time.Date(2026, 2, 28, 0, 0, 0, 0, time.UTC)
	numDays  = int(lastDay.Sub(firstDay).Hours()/24) + 1
)

// Stream ids of the random sources. Each note has two streams of its own
// (plan and render) derived from its index, so adding parallelism or changing
// how one note is rendered does not change any other note.
const (
	streamClusters = 1
	streamLinks    = 2
	streamNotes    = 16 // note i uses streamNotes+2i (plan) and streamNotes+2i+1 (render)
)

func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, splitmix(seed^splitmix(stream))))
}

// splitmix is SplitMix64's finaliser: it spreads nearby stream ids over the
// whole seed space.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

type kind int

const (
	kindSession kind = iota
	kindKnowledge
	kindReference
	kindPersonal
)

func (k kind) String() string {
	return [...]string{"session", "knowledge", "reference", "personal"}[k]
}

type size int

const (
	sizeNormal size = iota
	sizeShort
	sizeLong
)

// cluster is one subject: a system in one domain of work, or one personal
// interest. Its notes share its vocabulary.
type cluster struct {
	idx      int
	slug     string // folder and link name: "ferrite", "sourdough-2"
	name     string // as written in prose: "Ferrite", "sourdough"
	personal bool
	dom      *domain
	hob      *hobby
	sub      *subject
	prefix   string   // error code prefix: "FER"
	envs     []string // "fe-prod-eu1"
	team     []string // full names
	friends  []string // given names, for personal notes
	comps    []string // the domain's components this system has
	keys     []string // config keys: "compaction.max_concurrent"
	major    int
	minor0   int
	start    int // first day (days since firstDay)
	span     int // days
	notes    []int
}

// note is everything the plan decides about one note.
type note struct {
	idx      int
	c        *cluster
	kind     kind
	sub      int // index into sessionKinds or refKinds
	size     size
	fm       bool // has frontmatter
	day      int  // days since firstDay
	title    string
	base     string // file name without ".md"
	rel      string // vault-relative path
	headings []string
	long     int // index of the long section, for sizeLong
	links    []link

	// The note's own details: what it is about, and the specifics that make
	// it findable among fifty notes on the same subject.
	comp, problem, action, concept, metric string
	item, item2, technique                 string
	env, ver, oldver, lead                 string
	codes                                  [2]string
	keys                                   [2]string
	status, source                         string
	topics                                 []string
}

// link is one planned wikilink: Target is a file name without ".md".
type link struct {
	target, heading, alias string
	dangling               bool
}

type plan struct {
	seed     uint64
	clusters []*cluster
	notes    []*note
	bases    map[string]bool // lower-cased file names in use
	dangling []danglingLink
}

type danglingLink struct{ from, target string }

// newPlan plans a vault of n notes.
func newPlan(n int, seed uint64) *plan {
	p := &plan{seed: seed, bases: make(map[string]bool, n)}
	r := newRand(seed, streamClusters)
	p.planClusters(r, n)
	for _, c := range p.clusters {
		p.planNotes(c, r)
	}
	p.planLinks(newRand(seed, streamLinks))
	return p
}

// clusterSizes splits n into about n/ClusterSize parts of similar size.
func clusterSizes(r *rand.Rand, n int) []int {
	k := max(1, (n+ClusterSize/2)/ClusterSize)
	sizes := make([]int, k)
	for i := range sizes {
		sizes[i] = n / k
		if i < n%k {
			sizes[i]++
		}
	}
	if k > 1 {
		lo, hi := n/k*7/10, (n/k*13+9)/10
		for range 2 * k {
			i, j, d := r.IntN(k), r.IntN(k), 1+r.IntN(8)
			if i != j && sizes[i]-d >= lo && sizes[j]+d <= hi {
				sizes[i] -= d
				sizes[j] += d
			}
		}
	}
	return sizes
}

func (p *plan) planClusters(r *rand.Rand, n int) {
	sizes := clusterSizes(r, n)
	k := len(sizes)
	personal := make([]bool, k)
	for _, i := range r.Perm(k)[:(k*15+50)/100] {
		personal[i] = true
	}
	names := map[string]bool{}
	prefixes := map[string]bool{}
	subjectUse := map[string]int{}
	next := 0
	for i, sz := range sizes {
		c := &cluster{idx: i}
		for j := range sz {
			c.notes = append(c.notes, next+j)
		}
		next += sz
		c.span = 200 + r.IntN(900)
		c.start = r.IntN(numDays - 200)
		if c.start+c.span > numDays {
			c.span = numDays - c.start
		}
		if personal[i] {
			c.personal = true
			c.hob = &hobbies[r.IntN(len(hobbies))]
			c.sub = &c.hob.subjects[r.IntN(len(c.hob.subjects))]
			c.name = c.sub.name
			c.slug = slugify(c.sub.name)
			if u := subjectUse[c.slug]; u > 0 {
				c.slug = fmt.Sprintf("%s-%d", c.slug, u+1)
			}
			subjectUse[slugify(c.sub.name)]++
			for range 4 {
				c.friends = append(c.friends, pick(r, givenNames))
			}
		} else {
			c.dom = &domains[r.IntN(len(domains))]
			c.name = systemName(r, names)
			c.slug = strings.ToLower(c.name)
			c.prefix = codePrefix(c.slug, prefixes)
			short := c.slug[:2]
			for _, reg := range sample(r, regions, 3) {
				c.envs = append(c.envs, short+"-"+pick(r, []string{"prod", "prod", "staging", "canary"})+"-"+reg)
			}
			k := 5 + r.IntN(5)
			given, family := sample(r, givenNames, k), sample(r, surnames, k)
			for i := range k {
				c.team = append(c.team, given[i]+" "+family[i])
			}
			c.comps = sample(r, c.dom.components, 7)
			for range 14 {
				c.keys = append(c.keys, pick(r, c.dom.sections)+"."+pick(r, c.dom.settings))
			}
			c.keys = dedupe(c.keys)
			c.major = 1 + r.IntN(5)
			c.minor0 = r.IntN(12)
		}
		p.clusters = append(p.clusters, c)
	}
}

// systemName makes a new name from two or three syllables.
func systemName(r *rand.Rand, used map[string]bool) string {
	for {
		s := pick(r, syllables) + pick(r, syllables)
		if len(s) < 5 || r.IntN(4) == 0 {
			s += pick(r, syllables)
		}
		if !used[s] && len(s) <= 10 {
			used[s] = true
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
}

// codePrefix picks an unused error-code prefix from the letters of a name.
func codePrefix(slug string, used map[string]bool) string {
	up := strings.ToUpper(slug)
	cands := []string{up[:3]}
	if len(up) >= 4 {
		cands = append(cands, up[:4], up[:2]+up[len(up)-1:], up[:1]+up[2:4])
	}
	for _, c := range cands {
		if !used[c] {
			used[c] = true
			return c
		}
	}
	for i := 2; ; i++ {
		c := fmt.Sprintf("%s%d", up[:3], i)
		if !used[c] {
			used[c] = true
			return c
		}
	}
}

// planNotes decides the kind of every note of a cluster, then each note.
func (p *plan) planNotes(c *cluster, r *rand.Rand) {
	s := len(c.notes)
	kinds := make([]kind, s)
	if c.personal {
		for i := range kinds {
			kinds[i] = kindPersonal
		}
	} else if s >= 5 {
		nRef := min(max(1, (s*12+50)/100), len(refKinds))
		nKnow := (s*26 + 50) / 100
		for i := range kinds {
			switch {
			case i < nRef:
				kinds[i] = kindReference
			case i < nRef+nKnow:
				kinds[i] = kindKnowledge
			}
		}
	}
	refs := r.Perm(len(refKinds))
	nref := 0
	for j, i := range c.notes {
		n := &note{idx: i, c: c, kind: kinds[j]}
		if n.kind == kindReference {
			n.sub = refs[nref]
			nref++
		}
		p.planNote(n, newRand(p.seed, streamNotes+2*uint64(i)))
		p.notes = append(p.notes, n)
	}
}

func (p *plan) planNote(n *note, r *rand.Rand) {
	c := n.c
	n.day = c.start + r.IntN(c.span)
	switch x := r.IntN(100); {
	case x < 8:
		n.size = sizeShort
	case x < 12 && n.kind != kindReference:
		n.size = sizeLong
	}
	n.fm = r.IntN(100) >= 10
	if c.personal {
		n.item, n.item2 = pick2(r, c.sub.items)
		n.technique = pick(r, c.hob.techniques)
		n.problem = pick(r, c.hob.problems)
		n.status = pick(r, personalStatuses)
		n.source = pick(r, c.hob.sources)
		n.topics = []string{c.hob.name, slugify(c.sub.name)}
		if r.IntN(2) == 0 {
			n.topics = append(n.topics, slugify(n.item))
		}
	} else {
		d := c.dom
		n.comp = pick(r, c.comps)
		n.problem = pick(r, d.problems)
		n.action = pick(r, d.actions)
		n.concept = pick(r, d.concepts)
		n.metric = pick(r, d.metrics)
		n.env = pick(r, c.envs)
		n.lead = pick(r, c.team)
		minor := c.minor0 + (n.day-c.start)/60
		patch := r.IntN(7)
		n.ver = fmt.Sprintf("v%d.%d.%d", c.major, minor, patch)
		if patch > 0 {
			n.oldver = fmt.Sprintf("v%d.%d.%d", c.major, minor, patch-1)
		} else {
			n.oldver = fmt.Sprintf("v%d.%d.%d", c.major, max(0, minor-1), 3+r.IntN(5))
		}
		ci := indexOf(d.components, n.comp)
		n.codes[0] = fmt.Sprintf("%s-%d%03d", c.prefix, ci%9+1, r.IntN(1000))
		n.codes[1] = fmt.Sprintf("%s-%d%03d", c.prefix, r.IntN(9)+1, r.IntN(1000))
		n.keys[0], n.keys[1] = pick2(r, c.keys)
		n.topics = sample(r, d.topics, 2+r.IntN(3))
		if r.IntN(3) == 0 {
			n.topics = append(n.topics, c.slug)
		}
	}

	w := &writer{r: r, n: n}
	nsec := 2 + r.IntN(5)
	switch n.size {
	case sizeShort:
		nsec = r.IntN(2)
	case sizeLong:
		nsec = 3 + r.IntN(4)
	}
	var slug string
	switch n.kind {
	case kindSession:
		sk := weighted(r)
		n.sub = sk
		k := &sessionKinds[sk]
		n.title = w.text(pick(r, k.titles))
		slug = slugify(n.title)
		if k.name == "postmortem" && r.IntN(3) == 0 {
			n.title += " (" + monthYear(n.day) + ")"
		}
		n.status = pick(r, k.statuses)
		n.source = w.text(pick(r, k.sources))
		if nsec > 0 {
			n.headings = append([]string{k.first}, subsetInOrder(r, k.headings, nsec-1)...)
		}
	case kindKnowledge:
		n.title = w.text(pick(r, knowledgeTitles))
		slug = slugify(n.title)
		n.status = pick(r, knowledgeStatuses)
		n.source = pick(r, knowledgeSources)
		n.headings = subsetInOrder(r, knowledgeHeadings, nsec)
	case kindReference:
		k := &refKinds[n.sub]
		n.title = w.text(k.title)
		slug = c.slug + "-" + k.slug
		n.status = pick(r, []string{"active", "active", "deprecated"})
		n.source = k.source
		n.size = sizeNormal
		for _, h := range k.headings {
			n.headings = append(n.headings, w.text(h))
		}
		n.headings = dedupe(n.headings)
	case kindPersonal:
		n.title = w.text(pick(r, personalTitles))
		slug = slugify(n.title)
		if r.IntN(8) == 0 { // some people name files like titles
			slug = strings.ToLower(n.title)
			slug = strings.NewReplacer(",", "", ":", "", "'", "").Replace(slug)
		}
		n.headings = subsetInOrder(r, personalHeadings, nsec)
	}
	if n.size == sizeLong && len(n.headings) > 0 {
		n.long = r.IntN(len(n.headings))
	}
	n.base = p.uniqueBase(n, slug)
	n.rel = p.folder(n) + "/" + n.base + ".md"
}

// uniqueBase returns a file name no other note has: link targets are file
// names, so two notes with one name would make links ambiguous.
func (p *plan) uniqueBase(n *note, slug string) string {
	if len(slug) > 60 {
		slug = strings.TrimRight(slug[:60], "- ")
	}
	try := func(b string) bool {
		if p.bases[strings.ToLower(b)] {
			return false
		}
		p.bases[strings.ToLower(b)] = true
		return true
	}
	if n.kind == kindSession {
		slug = dateString(n.day) + "-" + slug
	}
	if try(slug) {
		return slug
	}
	sep := "-"
	if strings.Contains(slug, " ") {
		sep = " "
	}
	// A second note on the same theme names what sets it apart, as a person
	// would: the system, or the year.
	switch n.kind {
	case kindKnowledge:
		if b := slug + sep + n.c.slug; try(b) {
			n.title += " (" + n.c.name + ")"
			return b
		}
	case kindPersonal:
		y := strconv.Itoa(dayTime(n.day).Year())
		if b := slug + sep + y; try(b) {
			n.title += ", " + y
			return b
		}
	}
	for i := 2; ; i++ {
		if b := fmt.Sprintf("%s%s%d", slug, sep, i); try(b) {
			return b
		}
	}
}

func (p *plan) folder(n *note) string {
	switch n.kind {
	case kindSession:
		return "sessions/" + n.c.slug
	case kindKnowledge:
		return "knowledge/" + n.c.dom.area
	case kindReference:
		return "reference"
	default:
		return "personal/" + n.c.hob.name
	}
}

// planLinks picks every note's wikilinks: most to notes of its own cluster,
// some to notes on the same domain or hobby elsewhere, a few to anywhere, and
// a few to notes that do not exist.
func (p *plan) planLinks(r *rand.Rand) {
	near := map[string][]int{} // domain or hobby → notes
	for _, n := range p.notes {
		k := ""
		switch {
		case n.c.personal:
			k = "hobby:" + n.c.hob.name
		case n.kind == kindKnowledge || n.kind == kindReference:
			k = "domain:" + n.c.dom.name
		default:
			continue
		}
		near[k] = append(near[k], n.idx)
	}
	for _, n := range p.notes {
		var k int
		switch n.size {
		case sizeShort:
			k = r.IntN(2)
		case sizeLong:
			k = 3 + r.IntN(3)
		default:
			k = 2 + r.IntN(3)
		}
		nearKey := "hobby:"
		if n.c.personal {
			nearKey += n.c.hob.name
		} else {
			nearKey = "domain:" + n.c.dom.name
		}
		seen := map[int]bool{n.idx: true}
		for range k {
			x := r.IntN(100)
			if x < 4 {
				t := p.danglingTarget(n, r)
				n.links = append(n.links, link{target: t, dangling: true})
				p.dangling = append(p.dangling, danglingLink{n.rel, t})
				continue
			}
			var cands []int
			switch {
			case x < 84 && len(n.c.notes) > 1:
				cands = n.c.notes
			case x < 94 && len(near[nearKey]) > 1:
				cands = near[nearKey]
			}
			// Notes mostly link back in time: to what was written before.
			back := r.IntN(10) < 8
			t := -1
			for try := range 6 {
				var c int
				if cands != nil {
					c = cands[r.IntN(len(cands))]
				} else {
					c = r.IntN(len(p.notes))
				}
				if !seen[c] && (!back || try >= 4 || p.notes[c].day <= n.day) {
					t = c
					break
				}
			}
			if t < 0 {
				continue
			}
			seen[t] = true
			n.links = append(n.links, p.linkTo(p.notes[t], r))
		}
	}
}

func (p *plan) linkTo(t *note, r *rand.Rand) link {
	l := link{target: t.base}
	switch x := r.IntN(10); {
	case x >= 8 && len(t.headings) > 0:
		l.heading = pick(r, t.headings)
	case x >= 6:
		switch t.kind {
		case kindSession:
			l.alias = "the " + monthYear(t.day) + " " + sessionKinds[t.sub].name
		default:
			l.alias = lowerFirst(t.title)
		}
	}
	return l
}

func (p *plan) danglingTarget(n *note, r *rand.Rand) string {
	c := n.c
	y := dayTime(n.day).Year()
	var t string
	if c.personal {
		t = pick(r, []string{slugify(c.sub.name) + "-ideas", fmt.Sprintf("%s-plan-%d", c.hob.name, y+1), slugify(n.item) + "-notes"})
	} else {
		t = pick(r, []string{c.slug + "-design-doc", fmt.Sprintf("%s-roadmap-%d", c.slug, y+1), slugify(n.concept) + "-notes", c.slug + "-migration-plan-v2", strings.ToLower(lastWord(n.lead)) + "-1on1"})
	}
	for p.bases[strings.ToLower(t)] {
		t += "-draft"
	}
	return t
}

// folders lists the folders holding notes, each once, in first-use order.
func (p *plan) folders() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range p.notes {
		d := path.Dir(n.rel)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// weighted picks a session kind by weight.
func weighted(r *rand.Rand) int {
	total := 0
	for _, k := range sessionKinds {
		total += k.weight
	}
	x := r.IntN(total)
	for i, k := range sessionKinds {
		if x < k.weight {
			return i
		}
		x -= k.weight
	}
	return 0
}

func pick(r *rand.Rand, xs []string) string { return xs[r.IntN(len(xs))] }

// pick2 picks two different elements when there are two.
func pick2(r *rand.Rand, xs []string) (string, string) {
	i := r.IntN(len(xs))
	if len(xs) < 2 {
		return xs[i], xs[i]
	}
	j := (i + 1 + r.IntN(len(xs)-1)) % len(xs)
	return xs[i], xs[j]
}

// sample picks k different elements in random order.
func sample(r *rand.Rand, xs []string, k int) []string {
	k = min(k, len(xs))
	out := make([]string, k)
	for i, j := range r.Perm(len(xs))[:k] {
		out[i] = xs[j]
	}
	return out
}

// subsetInOrder picks k elements keeping their order.
func subsetInOrder(r *rand.Rand, xs []string, k int) []string {
	k = min(k, len(xs))
	keep := make([]bool, len(xs))
	for _, j := range r.Perm(len(xs))[:k] {
		keep[j] = true
	}
	out := make([]string, 0, k)
	for i, x := range xs {
		if keep[i] {
			out = append(out, x)
		}
	}
	return out
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	out := xs[:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return 0
}

func lastWord(s string) string { return s[strings.LastIndexByte(s, ' ')+1:] }

// slugify lower-cases s and joins its letters and digits with dashes.
func slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		case r == '\'':
		default:
			dash = true
		}
	}
	return b.String()
}

func dayTime(day int) time.Time { return firstDay.AddDate(0, 0, day) }

func dateString(day int) string { return dayTime(day).Format("2006-01-02") }

func monthYear(day int) string {
	t := dayTime(day)
	return monthNames[t.Month()-1] + " " + fmt.Sprint(t.Year())
}
