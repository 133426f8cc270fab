package gen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// writer renders text for one note. It appends to b; r is the note's own
// random stream.
type writer struct {
	b         []byte
	r         *rand.Rand
	n         *note
	used      [numRoles]uint64 // sentences already used in this note, per role
	usedLinks uint64           // link sentences already used
}

// text fills a template and returns it, leaving b as it was.
func (w *writer) text(tpl string) string {
	mark := len(w.b)
	w.fill(tpl)
	s := string(w.b[mark:])
	w.b = w.b[:mark]
	return s
}

// fill appends tpl with every {name} replaced by its value.
func (w *writer) fill(tpl string) {
	for {
		i := strings.IndexByte(tpl, '{')
		if i < 0 {
			w.b = append(w.b, tpl...)
			return
		}
		j := strings.IndexByte(tpl[i:], '}')
		if j < 0 {
			w.b = append(w.b, tpl...)
			return
		}
		w.b = append(w.b, tpl[:i]...)
		name := tpl[i+1 : i+j]
		tpl = tpl[i+j+1:]
		if name != "" && name[0] >= 'A' && name[0] <= 'Z' {
			v := w.value(strings.ToLower(name[:1]) + name[1:])
			w.b = append(w.b, upperFirst(v)...)
		} else {
			w.b = append(w.b, w.value(name)...)
		}
	}
}

// value is what a template placeholder stands for in this note: one of
// every note's values, else one of its cluster's kind (a hobby's, a
// system's); a name that is none of them stands for itself.
func (w *writer) value(name string) string {
	if v, ok := w.commonValue(name); ok {
		return v
	}
	if w.n.c.personal {
		return w.personalValue(name)
	}
	return w.workValue(name)
}

// commonValue is a placeholder every note fills alike: dates, numbers,
// durations, the cluster's slug.
func (w *writer) commonValue(name string) (string, bool) {
	n, r := w.n, w.r
	switch name {
	case "date":
		return dateString(n.day), true
	case "date2":
		return dateString(n.day + 7 + r.IntN(30)), true
	case "month":
		return monthYear(n.day), true
	case "year":
		return strconv.Itoa(dayTime(n.day).Year()), true
	case "weekday":
		return pick(r, weekdays), true
	case "n":
		return strconv.Itoa(2 + r.IntN(8)), true
	case "n2":
		return strconv.Itoa(10 + r.IntN(51)), true
	case "num":
		return strconv.Itoa(20 + 10*r.IntN(97)), true
	case "big":
		return thousands(1000 * (5 + r.IntN(900))), true
	case "pct":
		return strconv.Itoa(3+r.IntN(83)) + "%", true
	case "ms":
		return strconv.Itoa(40+10*r.IntN(90)) + " ms", true
	case "dur":
		return pick(r, durations), true
	case "x":
		return pick(r, multipliers), true
	case "slug":
		return n.c.slug, true
	}
	return "", false
}

// personalValue is a placeholder of a note on a hobby: its subject, items,
// tools, friends, quantities.
func (w *writer) personalValue(name string) string {
	n, c, r := w.n, w.n.c, w.r
	h := c.hob
	switch name {
	case "subject":
		return c.sub.name
	case "item":
		return n.item
	case "item2":
		if r.IntN(2) == 0 {
			return n.item2
		}
		return otherThan(r, c.sub.items, n.item)
	case "tool":
		return pick(r, h.tools)
	case "technique":
		return n.technique
	case "problem":
		if r.IntN(3) == 0 {
			return pick(r, h.problems)
		}
		return n.problem
	case "place":
		return pick(r, h.places)
	case "friend", "who", "who2", "person":
		return pick(r, c.friends)
	case "qty", "qty2":
		u := h.units[r.IntN(len(h.units))]
		return strconv.Itoa(u.min+u.step*r.IntN((u.max-u.min)/u.step+1)) + " " + u.name
	case "adj":
		return pick(r, h.adjs)
	}
	return name
}

// workValue is a placeholder of a note on a system at work: its components,
// problems, metrics, settings, versions, people.
func (w *writer) workValue(name string) string {
	n, c, r := w.n, w.n.c, w.r
	d := c.dom
	switch name {
	case "sys":
		return c.name
	case "domain":
		return d.name
	case "team":
		return d.team
	case "comp":
		return n.comp
	case "comp2":
		return otherThan(r, c.comps, n.comp)
	case "problem":
		return n.problem
	case "problem2":
		return otherThan(r, d.problems, n.problem)
	case "metric":
		return n.metric
	case "metric2":
		return otherThan(r, d.metrics, n.metric)
	case "action":
		return n.action
	case "concept":
		return n.concept
	case "noun", "noun2":
		return pick(r, d.nouns)
	case "section", "section2", "section3":
		sec := pick(r, d.sections)
		if acronyms[sec] {
			return strings.ToUpper(sec)
		}
		return sec
	case "key":
		return n.keys[0]
	case "key2":
		return n.keys[1]
	case "val", "val2":
		return settingValue(r, n.keys[0])
	case "code":
		return n.codes[0]
	case "code2":
		return n.codes[1]
	case "ver":
		return n.ver
	case "oldver":
		return n.oldver
	case "ver2":
		return w.earlierVersion(1)
	case "ver3":
		return w.earlierVersion(2)
	case "env":
		return n.env
	case "lead":
		return n.lead
	case "person", "person2", "person3":
		return pick(r, c.team)
	case "who", "who2":
		return lastWord(pick(r, c.team))
	case "region":
		return pick(r, regions)
	}
	return name
}

// earlierVersion is the system's release back minor versions before the
// one current on the note's day.
func (w *writer) earlierVersion(back int) string {
	n, c := w.n, w.n.c
	minor := c.minor0 + (n.day-c.start)/60
	return fmt.Sprintf("v%d.%d.0", c.major, max(0, minor-back))
}

// render appends the whole note: frontmatter, title, sections.
func (w *writer) render() {
	n := w.n
	if n.fm {
		w.frontmatter()
	}
	w.b = append(w.b, "# "...)
	w.b = append(w.b, n.title...)
	w.b = append(w.b, "\n\n"...)

	// Lay the note out first, so the links can be spread over its paragraphs.
	secs := make([]section, len(n.headings))
	intro := 0
	switch n.size {
	case sizeShort:
		intro = 1
	default:
		if w.r.IntN(10) < 6 {
			intro = 1
		}
	}
	slots := intro
	for i, h := range n.headings {
		secs[i] = w.layout(h, i)
		slots += secs[i].paras
	}
	// A note with nothing else links from a short "Related" list; so do some
	// others, as people who tidy their notes do.
	var related []link
	links := n.links
	if len(links) > 0 && (slots == 0 || (len(links) >= 3 && w.r.IntN(4) == 0)) {
		cut := 0
		if slots > 0 {
			cut = len(links) - 1 - w.r.IntN(2)
		}
		related = links[cut:]
		links = links[:cut]
	}
	at := make([][]link, slots)
	for _, l := range links {
		s := w.r.IntN(slots)
		at[s] = append(at[s], l)
	}

	slot := 0
	if intro > 0 {
		w.intro(at[0])
		slot++
	}
	for i, h := range n.headings {
		s := secs[i]
		w.b = append(w.b, "## "...)
		w.b = append(w.b, h...)
		w.b = append(w.b, "\n\n"...)
		w.section(h, s, at[slot:slot+s.paras])
		slot += s.paras
	}
	if len(related) > 0 {
		w.b = append(w.b, "## Related\n\n"...)
		for _, l := range related {
			w.b = append(w.b, "- "...)
			w.link(l)
			w.b = append(w.b, '\n')
		}
		w.b = append(w.b, '\n')
	}
	// One newline at the end, as editors leave it.
	for len(w.b) > 1 && w.b[len(w.b)-1] == '\n' && w.b[len(w.b)-2] == '\n' {
		w.b = w.b[:len(w.b)-1]
	}
}

func (w *writer) frontmatter() {
	n := w.n
	w.b = append(w.b, "---\ntype: "...)
	w.b = append(w.b, n.kind.String()...)
	w.b = append(w.b, "\ndate: "...)
	w.b = append(w.b, dateString(n.day)...)
	if !n.c.personal && (n.kind != kindKnowledge || w.r.IntN(10) < 6) {
		w.b = append(w.b, "\nproject: "...)
		w.b = append(w.b, n.c.slug...)
	}
	w.b = append(w.b, "\nstatus: "...)
	w.b = append(w.b, n.status...)
	w.b = append(w.b, "\nsource: "...)
	w.b = append(w.b, yamlString(n.source)...)
	if w.r.IntN(4) == 0 {
		w.b = append(w.b, "\ntopics:"...)
		for _, t := range n.topics {
			w.b = append(w.b, "\n  - "...)
			w.b = append(w.b, t...)
		}
	} else {
		w.b = append(w.b, "\ntopics: ["...)
		w.b = append(w.b, strings.Join(n.topics, ", ")...)
		w.b = append(w.b, ']')
	}
	w.b = append(w.b, "\n---\n\n"...)
}

// yamlString quotes s when a plain YAML scalar would not read back as s:
// " #" starts a comment, ": " a mapping, and some characters cannot start one.
func yamlString(s string) string {
	if s == "" || strings.Contains(s, " #") || strings.Contains(s, ": ") || strings.HasSuffix(s, ":") ||
		strings.ContainsRune("-?:,[]{}#&*!|>'\"%@`", rune(s[0])) || strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	return s
}

// section is the layout of one "## " section.
type section struct {
	role  role
	paras int
	extra extra
	sents [2]int // sentences per paragraph: min, max
	mixed bool   // paragraphs take turns over mixRoles, starting at role
}

// mixRoles are the roles a long section wanders over.
var mixRoles = [2][]role{
	{roleGeneric, roleCause, roleFindings, roleDiscussion, roleImpact, roleDetection, roleDecisions, roleContext, roleResults, roleExplain, roleSignals, roleTuning, rolePlan, roleSummary},
	{rolePersonalLog, rolePersonalNotes, rolePersonalProblem, rolePersonalNext, rolePersonalPlan},
}

// codeFits and bulletsFit say which sections may get a code block or a list
// besides their prose.
var (
	codeFits   = map[role]bool{roleCause: true, roleFindings: true, roleTuning: true, roleExplain: true, rolePlan: true, roleResults: true, roleDetection: true, roleContext: true, roleGeneric: true}
	bulletsFit = map[role]bool{roleFindings: true, roleDiscussion: true, roleDecisions: true, rolePlan: true, roleExplain: true, roleContext: true, roleGeneric: true}
)

type extra int

const (
	extraNone extra = iota
	extraTimeline
	extraFollowUps
	extraSteps
	extraMetrics
	extraAntiPatterns
	extraChecklist
	extraBullets // generic bullets from follow-ups or checklist
	extraCode
	extraKit
	extraRef // reference content decided by heading
)

func (w *writer) layout(h string, i int) section {
	n, r := w.n, w.r
	s := section{role: roleGeneric, paras: 1 + r.IntN(3), sents: [2]int{2, 4}}
	if n.kind == kindReference {
		s.role, s.extra, s.paras = roleReference, extraRef, 0
		if r.IntN(10) < 3 {
			s.paras = 1
		}
		if refProse(h) {
			s.paras = 1 + r.IntN(2)
		}
		return s
	}
	if n.c.personal {
		switch h {
		case "What I did", "Log", "Results":
			s.role = rolePersonalLog
		case "What went wrong":
			s.role = rolePersonalProblem
		case "Next time":
			s.role = rolePersonalNext
		case "Plan":
			s.role = rolePersonalPlan
		case "Kit":
			s.role, s.extra, s.paras = rolePersonalNotes, extraKit, r.IntN(2)
		default:
			s.role = rolePersonalNotes
		}
	} else {
		switch h {
		case "Summary":
			s.role = roleSummary
		case "Timeline":
			s.role, s.extra, s.paras = roleDetection, extraTimeline, r.IntN(2)
		case "Impact":
			s.role = roleImpact
		case "Detection":
			s.role = roleDetection
		case "Root cause", "Why it hurt", "What went badly", "Failure modes":
			s.role = roleCause
		case "What went well":
			s.role = roleWentWell
		case "Follow-ups", "Actions", "Next steps", "Cleanup":
			s.role, s.extra, s.paras = roleDecisions, extraFollowUps, r.IntN(2)
		case "Plan", "What changed":
			s.role = rolePlan
		case "Rollout steps":
			s.role, s.extra, s.paras = rolePlan, extraSteps, r.IntN(2)
		case "Metrics to watch":
			s.role, s.extra, s.paras = roleSignals, extraMetrics, r.IntN(2)
		case "Results":
			s.role = roleResults
		case "Rollback plan":
			s.role = roleRollback
		case "Context", "Why", "Setup":
			s.role = roleContext
		case "Findings", "Problems found", "Bottlenecks", "Surprises":
			s.role = roleFindings
		case "Discussion", "Open questions":
			s.role = roleDiscussion
		case "Decisions":
			s.role = roleDecisions
		case "The idea", "How it works", "In practice", "When not to use it", "Further reading":
			s.role = roleExplain
		case "Signals":
			s.role = roleSignals
		case "Tuning":
			s.role = roleTuning
		case "Anti-patterns":
			s.role, s.extra, s.paras = roleExplain, extraAntiPatterns, r.IntN(2)
		case "Checklist":
			s.role, s.extra, s.paras = roleExplain, extraChecklist, r.IntN(2)
		}
		if s.extra == extraNone {
			switch x := r.IntN(100); {
			case x < 14 && codeFits[s.role]:
				s.extra = extraCode
			case x >= 14 && x < 26 && bulletsFit[s.role]:
				s.extra = extraBullets
			}
		}
	}
	switch {
	case n.size == sizeShort:
		s.paras, s.sents = 1, [2]int{1, 3}
		if s.extra == extraCode || s.extra == extraBullets {
			s.extra = extraNone
		}
	case n.size == sizeLong && i == n.long:
		// About 1,500 words in one section: meeting notes pasted whole,
		// wandering over everything the note is about.
		s.paras, s.sents, s.mixed = 18+r.IntN(8), [2]int{3, 6}, true
	}
	return s
}

func (w *writer) intro(links []link) {
	n, r := w.n, w.r
	switch {
	case n.kind == kindSession && r.IntN(3) > 0:
		w.fill(pick(r, []string{
			"Written by {lead} with {person}. Cluster `{env}`, {sys} {ver}.",
			"Author: {lead}. Reviewers: {person}, {person2}. {Sys} {ver} on `{env}`.",
			"Notes by {lead}, {date}. Environment `{env}`, running {ver}.",
		}))
		w.linkSentences(links)
		w.b = append(w.b, "\n\n"...)
	case n.kind == kindReference:
		w.fill("Current as of {sys} {ver}. ")
		w.paragraph(roleReference, [2]int{1, 2}, links)
	case n.c.personal:
		w.paragraph(rolePersonalNotes, [2]int{1, 3}, links)
	default:
		w.paragraph(roleExplain, [2]int{1, 3}, links)
	}
}

// section appends the body of one section; links holds the links planned for
// each of its paragraphs.
func (w *writer) section(h string, s section, links [][]link) {
	r := w.r
	// A list or block of code reads better after the first paragraph.
	extraAt := 0
	if s.paras > 0 {
		extraAt = r.IntN(s.paras + 1)
	}
	for p := 0; p <= s.paras; p++ {
		if p == extraAt {
			w.extra(h, s.extra)
		}
		if p < s.paras {
			ro := s.role
			if s.mixed {
				mix := mixRoles[0]
				if w.n.c.personal {
					mix = mixRoles[1]
				}
				ro = mix[(indexOfRole(mix, s.role)+p)%len(mix)]
			}
			w.paragraph(ro, s.sents, links[p])
		}
	}
}

// paragraph appends sentences of one role, with the given links worked in.
func (w *writer) paragraph(ro role, sents [2]int, links []link) {
	r := w.r
	k := sents[0] + r.IntN(sents[1]-sents[0]+1)
	linkAt := make([]int, len(links))
	for i := range links {
		linkAt[i] = r.IntN(k + 1)
	}
	for i := 0; i <= k; i++ {
		for j, at := range linkAt {
			if at == i {
				w.space()
				w.linkSentence(links[j])
			}
		}
		if i == k {
			break
		}
		w.space()
		switch {
		case ro == roleGeneric || w.n.c.personal || (ro != roleReference && r.IntN(5) > 0) || r.IntN(2) == 0:
			w.sentence(ro)
		default:
			w.sentence(roleGeneric)
		}
	}
	w.b = append(w.b, "\n\n"...)
}

func (w *writer) space() {
	if len(w.b) > 0 && w.b[len(w.b)-1] != '\n' && w.b[len(w.b)-1] != ' ' {
		w.b = append(w.b, ' ')
	}
}

// sentence appends one sentence of the role, one this note has not used yet
// while there are any.
func (w *writer) sentence(ro role) {
	pool := sentences[ro]
	if len(pool) == 0 {
		pool, ro = sentences[roleGeneric], roleGeneric
	}
	w.fill(pool[unused(w.r, &w.used[ro], len(pool))])
}

// unused picks an index below n not yet set in *used, and sets it; once all
// are used it starts over.
func unused(r *rand.Rand, used *uint64, n int) int {
	n = min(n, 64)
	all := uint64(1)<<n - 1
	if *used&all == all {
		*used = 0
	}
	i := r.IntN(n)
	for *used&(1<<i) != 0 {
		i = (i + 1) % n
	}
	*used |= 1 << i
	return i
}

func (w *writer) linkSentences(links []link) {
	for _, l := range links {
		w.space()
		w.linkSentence(l)
	}
}

func (w *writer) linkSentence(l link) {
	pool := linkSentences
	if w.n.c.personal {
		pool = personalLinkSentences
	}
	tpl := pool[unused(w.r, &w.usedLinks, len(pool))]
	i := strings.Index(tpl, "[[L]]")
	w.fill(tpl[:i])
	w.link(l)
	w.fill(tpl[i+5:])
}

func (w *writer) link(l link) {
	w.b = append(w.b, "[["...)
	w.b = append(w.b, l.target...)
	if l.heading != "" {
		w.b = append(w.b, '#')
		w.b = append(w.b, l.heading...)
	}
	if l.alias != "" {
		w.b = append(w.b, '|')
		w.b = append(w.b, l.alias...)
	}
	w.b = append(w.b, "]]"...)
}

// bullets appends k lines from pool as a list, in random order, no repeats.
func (w *writer) bullets(pool []string, k int, suffix string) {
	for _, i := range w.r.Perm(len(pool))[:min(k, len(pool))] {
		w.b = append(w.b, "- "...)
		w.fill(pool[i])
		w.fill(suffix)
		w.b = append(w.b, '\n')
	}
	w.b = append(w.b, '\n')
}

func (w *writer) extra(h string, e extra) {
	r := w.r
	switch e {
	case extraTimeline:
		w.timeline()
	case extraFollowUps:
		w.bullets(followUps, 2+r.IntN(4), " (owner: {who}, due {date2})")
	case extraSteps:
		for i, s := range []string{"Canary on `{env}` at {pct} of traffic", "Half of `{env}`, one zone at a time", "All of `{env}`", "The other regions, one per day", "Remove the old code path in {ver}"}[:3+r.IntN(3)] {
			w.b = append(w.b, strconv.Itoa(i+1)...)
			w.b = append(w.b, ". "...)
			w.fill(s)
			w.b = append(w.b, '\n')
		}
		w.b = append(w.b, '\n')
	case extraMetrics:
		for _, m := range sample(r, w.n.c.dom.metrics, 2+r.IntN(3)) {
			w.b = append(w.b, "- "...)
			w.b = append(w.b, upperFirst(m)...)
			w.fill(pick(r, []string{": should stay under {num}", ": alert if it moves by {pct}", ", per node and in total", ": compare with the same hour last week"}))
			w.b = append(w.b, '\n')
		}
		w.b = append(w.b, '\n')
	case extraAntiPatterns:
		w.bullets(antiPatterns, 3+r.IntN(3), "")
	case extraChecklist:
		w.bullets(checklistItems, 3+r.IntN(4), "")
	case extraBullets:
		if r.IntN(2) == 0 {
			w.bullets(followUps, 2+r.IntN(3), "")
		} else {
			w.bullets(checklistItems, 2+r.IntN(3), "")
		}
	case extraCode:
		w.code()
	case extraKit:
		w.bullets(personalItems, 3+r.IntN(3), "")
	case extraRef:
		w.reference(h)
	}
}

func (w *writer) timeline() {
	r := w.r
	mins := 60*r.IntN(20) + r.IntN(60)
	for _, ev := range subsetInOrder(r, timelineEvents, 4+r.IntN(5)) {
		w.b = fmt.Appendf(w.b, "- %02d:%02d UTC: ", mins/60%24, mins%60)
		w.fill(ev)
		w.b = append(w.b, '\n')
		mins += 3 + r.IntN(80)
	}
	w.b = append(w.b, '\n')
}

// code appends a fenced block: a config excerpt, commands or log lines.
func (w *writer) code() {
	n, r := w.n, w.r
	switch r.IntN(3) {
	case 0:
		w.b = append(w.b, "```toml\n"...)
		last := ""
		for _, k := range n.keys {
			sec, set, _ := strings.Cut(k, ".")
			if sec != last {
				if last != "" {
					w.b = append(w.b, '\n')
				}
				w.b = fmt.Appendf(w.b, "[%s]\n", sec)
				last = sec
			}
			w.b = fmt.Appendf(w.b, "%s = %s\n", set, tomlValue(settingValue(r, set)))
		}
	case 1:
		w.b = append(w.b, "```sh\n"...)
		sec, set, _ := strings.Cut(pick(r, n.c.keys), ".")
		cmds := []string{
			"{slug} " + sec + " status --env {env}",
			"{slug} config get " + sec + "." + set + " --env {env}",
			"{slug} config set " + sec + "." + set + "=" + settingValue(r, set) + " --env {env}",
			"{slug} " + sec + " drain --node {n} --timeout 10m",
			"{slug} logs --since 2h --grep {code}",
		}
		for _, i := range subsetIndexes(r, len(cmds), 2+r.IntN(3)) {
			w.fill(cmds[i])
			w.b = append(w.b, '\n')
		}
	default:
		w.b = append(w.b, "```text\n"...)
		for range 3 + r.IntN(4) {
			sec, _, _ := strings.Cut(pick(r, n.c.keys), ".")
			w.b = fmt.Appendf(w.b, "%sT%02d:%02d:%02dZ %s %s: ", dateString(n.day), r.IntN(24), r.IntN(60), r.IntN(60), pick(r, []string{"WARN", "ERROR", "INFO"}), sec)
			w.fill(pick(r, []string{"{code} {comp} gave up after {n} attempts node={n}", "{code2} slow operation took {ms} shard={n2}", "{metric} above threshold value={num}", "retrying request attempt={n} backoff={ms}"}))
			w.b = append(w.b, '\n')
		}
	}
	w.b = append(w.b, "```\n\n"...)
}

// settingValue is a plausible value for a config key, judged by its name.
func settingValue(r *rand.Rand, key string) string {
	has := func(subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(key, sub) {
				return true
			}
		}
		return false
	}
	switch {
	case strings.HasSuffix(key, "_ms"):
		return pick(r, []string{"100", "250", "500", "1000", "5000", "30000"})
	case has("_pct", "rate", "ratio"):
		return pick(r, []string{"1", "5", "10", "25", "0.05", "0.5"})
	case has("_seconds", "_minutes", "_hours", "_days", "_mb", "bits", "_sla", "hour", "day", "cost", "version", "epochs"):
		return strconv.Itoa(pickInt(r, 2, 7, 12, 24, 30, 90))
	case has("size", "bytes", "memory", "buffer"):
		return pick(r, []string{"16MiB", "64MiB", "256MiB", "1GiB", "4GiB"})
	case has("interval", "timeout", "delay", "ttl", "window", "period", "deadline", "wait", "fsync"):
		return pick(r, []string{"500ms", "5s", "30s", "1m", "10m", "1h", "12h"})
	case has("max", "concurrent", "replicas", "batch", "top_k", "attempts", "retries", "count", "threshold", "trigger", "quota", "clauses", "limit", "boost", "cost", "surge", "lookback", "concurrency", "prefetch", "items"):
		return strconv.Itoa(pickInt(r, 2, 3, 4, 8, 16, 64, 100, 500, 1000))
	case has("jitter"):
		return pick(r, []string{"full", "equal", "none"})
	case has("mode"):
		return pick(r, []string{"half_even", "half_up", "strict"})
	case has("source", "schedule", "run_day"):
		return pick(r, []string{"daily", "1,3,7", "ecb", "first_monday"})
	}
	return pick(r, []string{"true", "false", "auto", "2", "0.2"})
}

// subsetIndexes picks k of the indexes below n, in increasing order.
func subsetIndexes(r *rand.Rand, n, k int) []int {
	keep := r.Perm(n)[:min(k, n)]
	slices.Sort(keep)
	return keep
}

func pickInt(r *rand.Rand, xs ...int) int { return xs[r.IntN(len(xs))] }

func tomlValue(v string) string {
	if _, err := strconv.ParseFloat(v, 64); err == nil || v == "true" || v == "false" {
		return v
	}
	return strconv.Quote(v)
}

// refProse reports whether a reference section is prose rather than a table
// or a list.
func refProse(h string) bool {
	switch h {
	case "Conventions", "Naming", "Install", "Authentication", "Raising a limit", "Escalation", "Failure behaviour", "Silences", "Overview":
		return true
	}
	return false
}

// reference appends the table or list a reference section is made of.
func (w *writer) reference(h string) {
	c, r := w.n.c, w.r
	switch {
	case refProse(h):
	case strings.HasSuffix(h, " keys") || strings.HasSuffix(h, "limits"):
		w.b = append(w.b, "| Key | Default | Notes |\n|---|---|---|\n"...)
		for _, k := range w.sectionKeys(h, 3+r.IntN(4)) {
			w.b = fmt.Appendf(w.b, "| `%s` | `%s` | ", k, settingValue(r, k))
			w.fill(pick(r, []string{"Per node. Over the limit, requests fail with `{code}`.", "*reload*", "Added in {ver}. *reload*", "Deprecated since {oldver}.", "Only applies to new {noun}.", "Shared by the {comp} and the {comp2}."}))
			w.b = append(w.b, " |\n"...)
		}
		w.b = append(w.b, '\n')
	case strings.HasSuffix(h, " codes") || h == "Errors" || h == "Exit codes":
		for range 3 + r.IntN(4) {
			code := fmt.Sprintf("%s-%d%03d", c.prefix, 1+r.IntN(9), r.IntN(1000))
			if h == "Exit codes" {
				code = strconv.Itoa(r.IntN(10))
			}
			w.b = fmt.Appendf(w.b, "- `%s` %s: ", code, otherThan(r, c.comps, ""))
			w.fill(pick(r, []string{"{comp2} gave up after the configured attempts.", "limit from `{key}` exceeded; retry with backoff.", "request rejected while {noun} are being moved.", "internal error; collect logs and page {team}.", "input failed validation; nothing was written."}))
			w.b = append(w.b, '\n')
		}
		w.b = append(w.b, '\n')
	case h == "Commands" || h == "Examples" || h == "Common tasks":
		w.code()
	case h == "Endpoints":
		for range 3 + r.IntN(4) {
			noun := strings.ReplaceAll(pick(r, c.dom.nouns), " ", "-")
			w.b = fmt.Appendf(w.b, "- `%s /v%d/%s`: ", pick(r, []string{"GET", "GET", "POST", "DELETE", "PUT"}), c.major, noun)
			w.fill(pick(r, []string{"lists {noun}, newest first, 100 per page.", "creates one; fails with `{code}` over the limit.", "returns the current state of the {comp}.", "removes it; idempotent."}))
			w.b = append(w.b, '\n')
		}
		w.b = append(w.b, '\n')
	case strings.HasSuffix(h, " metrics") || h == "Dashboards":
		w.b = append(w.b, "| Metric | Type | Meaning |\n|---|---|---|\n"...)
		for _, m := range sample(r, c.dom.metrics, 3+r.IntN(3)) {
			w.b = fmt.Appendf(w.b, "| `%s_%s` | %s | %s |\n", c.slug, strings.ReplaceAll(slugify(m), "-", "_"), pick(r, []string{"gauge", "counter", "histogram"}), upperFirst(m))
		}
		w.b = append(w.b, '\n')
	case strings.HasSuffix(h, "alerts"):
		w.b = append(w.b, "| Alert | Condition | First step |\n|---|---|---|\n"...)
		for _, m := range sample(r, c.dom.metrics, 2+r.IntN(3)) {
			w.b = fmt.Appendf(w.b, "| %s%s | above %d for %dm | ", upperFirst(c.slug), strings.ReplaceAll(upperWords(m), " ", ""), 10+10*r.IntN(50), 5*(1+r.IntN(6)))
			w.fill(pick(r, []string{"check the {comp} dashboard", "look for `{code}` in the logs", "compare `{key}` with the repository", "page {team} if it persists"}))
			w.b = append(w.b, " |\n"...)
		}
		w.b = append(w.b, '\n')
	default: // terms, versions, upstream and downstream, dashboards of a component
		w.bullets([]string{
			"**{Comp2}**: owned by {team}; talks to the {comp} over gRPC.",
			"Fixed: {problem2} when `{key}` was set to {val}.",
			"Changed: the default of `{key}` is now {val}.",
			"Added: the {comp2} reports {metric2}.",
			"**{Noun}**: what the {comp2} handles; counted in {metric2}.",
			"Removed: the old {comp2} fallback, unused since {oldver}.",
			"**{Metric2}**: watched on the {sys} overview; alerts page {team}.",
		}, 3+r.IntN(3), "")
	}
}

// sectionKeys picks k config keys for a "<section> keys" table: the
// cluster's own keys of that section first, then others of the section.
func (w *writer) sectionKeys(h string, k int) []string {
	c, r := w.n.c, w.r
	sec := strings.ToLower(strings.TrimSuffix(h, " keys"))
	if !slices.Contains(c.dom.sections, sec) { // "Deprecated keys"
		return sample(r, c.keys, k)
	}
	var keys []string
	for _, key := range c.keys {
		if strings.HasPrefix(key, sec+".") {
			keys = append(keys, key)
		}
	}
	for _, set := range sample(r, c.dom.settings, k) {
		keys = append(keys, sec+"."+set)
	}
	keys = dedupe(keys)
	return keys[:min(k, len(keys))]
}

// acronyms are config sections written in capitals in headings.
var acronyms = map[string]bool{"wal": true, "dns": true, "tls": true, "slo": true, "mfa": true, "sso": true, "dlq": true, "lb": true, "rbac": true}

// otherThan picks an element of xs different from x when there is one.
func otherThan(r *rand.Rand, xs []string, x string) string {
	for range 4 {
		if y := pick(r, xs); y != x {
			return y
		}
	}
	return pick(r, xs)
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// lowerFirst lower-cases the first letter unless the word is an acronym.
func lowerFirst(s string) string {
	if len(s) < 2 || s[0] < 'A' || s[0] > 'Z' || (s[1] >= 'A' && s[1] <= 'Z') {
		return s
	}
	return string(s[0]-'A'+'a') + s[1:]
}

func upperWords(s string) string {
	f := strings.Fields(s)
	for i := range f {
		f[i] = upperFirst(f[i])
	}
	return strings.Join(f, " ")
}

func thousands(v int) string {
	s := strconv.Itoa(v)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func indexOfRole(rs []role, ro role) int {
	for i, x := range rs {
		if x == ro {
			return i
		}
	}
	return 0
}
