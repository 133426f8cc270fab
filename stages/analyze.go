package stages

import "strings"

// Query analysis for the keyword branch. FTS5's porter tokenizer keeps every
// word, and in an OR query bm25 sums over the terms, so a conversational
// question ("how do I ... my ...") rewards short chunks that happen to hold
// "how", "do", "i" and "my". Analysis drops such words from the query (never
// from the index): exact tokens such as FERR-4102, lease_ttl_ms, file.mtime or
// --flags split into the same word runs as before and none of their parts is a
// stopword, so they match as they always did.

// Stopword lists a keyword stage may apply to the query.
const (
	StopwordsNone    = "none"
	StopwordsEnglish = "english" // function words only (englishStopwords)
	StopwordsNLTK    = "nltk"    // NLTK's English list (nltkStopwords)
)

// englishStopwords are English function words that carry no subject:
// articles, pronouns and possessives, auxiliary and modal verbs, question
// words, common prepositions and conjunctions, and the pieces Terms makes of
// contractions ("don't" → "don", "t"). Unlike NLTK's list it keeps words
// that change what a question asks: negations (not, no, nor), time and order
// (before, after, again, once, during, until), direction (up, down, off, over,
// under, out) and quantity (only, all, few, more, most, same, very).
var englishStopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the i me my myself we our ours ourselves you your yours
		yourself yourselves he him his himself she her hers herself it its itself they them their
		theirs themselves what which who whom whose this that these those am is are was were be been
		being have has had having do does did doing will would shall should can could may might must
		how why when where of at by for with about into from to in on as and or but if so than then
		there here s t d ll m o re ve y don doesn didn isn aren wasn weren hasn haven hadn won wouldn
		shouldn couldn`) {
		m[w] = true
	}
	return m
}()

// nltkStopwords is NLTK's English list (179 words, the contraction pieces
// included, since Terms splits "don't" into "don" and "t").
var nltkStopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you your yours yourself
		yourselves he him his himself she her hers herself it its itself they them their theirs
		themselves what which who whom this that these those am is are was were be been being have
		has had having do does did doing a an the and but if or because as until while of at by for
		with about against between into through during before after above below to from up down in
		out on off over under again further then once here there when where why how all any both
		each few more most other some such no nor not only own same so than too very s t can will
		just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma
		mightn mustn needn shan shouldn wasn weren won wouldn`) {
		m[w] = true
	}
	return m
}()

// IsStopword reports whether a lower-cased term is on the named list.
func IsStopword(list, term string) bool {
	switch list {
	case StopwordsEnglish:
		return englishStopwords[term]
	case StopwordsNLTK:
		return nltkStopwords[term]
	}
	return false
}

func validateStopwords(s *string) error {
	switch *s {
	case "":
		*s = StopwordsNone
	case StopwordsNone, StopwordsEnglish, StopwordsNLTK:
	default:
		return settingErrorf("stopwords", "stopwords %q is not %s, %s or %s", *s, StopwordsNone, StopwordsEnglish, StopwordsNLTK)
	}
	return nil
}

// AnalyzeTerms is the query's terms (Terms) without the list's stopwords, in
// order, repeats kept. A query made only of stopwords ("how do I", "to be or
// not to be") keeps every term: dropping them all would search for nothing.
func AnalyzeTerms(text, stopwords string) []string {
	terms := Terms(text)
	if stopwords == StopwordsNone || stopwords == "" {
		return terms
	}
	kept := make([]string, 0, len(terms))
	for _, t := range terms {
		if !IsStopword(stopwords, t) {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return terms
	}
	return kept
}
