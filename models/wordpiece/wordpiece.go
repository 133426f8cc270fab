// Package wordpiece is a BERT WordPiece tokenizer that reads a Hugging Face
// tokenizer.json and gives the ids Hugging Face's tokenizers library gives for
// it, token for token.
//
// It implements what BERT-family embedders and cross-encoders use (bge-small,
// MiniLM): the BertNormalizer, the BertPreTokenizer, the WordPiece model, the
// non-normalized special tokens of added_tokens, and a [CLS] … [SEP]
// post-processor. Any other component, or an option of these it does not
// implement, is a load error naming it: a tokenizer that silently differed
// from the model's training would give wrong embeddings with no sign of it.
//
// The character classes (controls, whitespace, punctuation, nonspacing marks,
// lowercasing) are generated from the pinned Hugging Face release itself (see
// gen_tables.py), because its Unicode tables are not Go's.
//
// Text that is not valid UTF-8 is read the way Go ranges over a string: each
// invalid byte is U+FFFD. With clean_text on, as in every BERT tokenizer, the
// normalizer drops U+FFFD, so invalid bytes vanish, exactly as they do when
// the bytes are decoded with replacement before Hugging Face sees them.
package wordpiece

//go:generate sh -c "PYTHONPATH=$(../../scripts/pytok.sh) python3 gen_tables.py > tables.go && gofmt -w tables.go"

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer turns text into WordPiece ids. It is safe for concurrent use.
type Tokenizer struct {
	// normalizer
	clean, chinese, strip, lower bool

	vocab     map[string]int32 // word-initial pieces
	cont      map[string]int32 // continuation pieces, prefix removed
	maxPiece  int              // longest key of either map, in bytes
	unk       int32
	maxChars  int
	added     []addedToken // longest first
	addedLead [256]bool    // first bytes of added tokens
	cls, sep  int32
}

type addedToken struct {
	content string
	id      int32
}

type ranges [][2]rune

func (rs ranges) has(r rune) bool {
	i := sort.Search(len(rs), func(i int) bool { return rs[i][1] >= r })
	return i < len(rs) && rs[i][0] <= r
}

// Load reads a tokenizer.json. Its truncation and padding are ignored: the
// caller cuts and pads by its own rules.
func Load(path string) (*Tokenizer, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading tokenizer: %w", err)
	}
	t, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

type fileDoc struct {
	Version       string          `json:"version"`
	Truncation    json.RawMessage `json:"truncation"`
	Padding       json.RawMessage `json:"padding"`
	AddedTokens   []addedTokenDoc `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	Model         json.RawMessage `json:"model"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
}

type addedTokenDoc struct {
	ID         int32  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

type bertNormalizerDoc struct {
	Type               string `json:"type"`
	CleanText          bool   `json:"clean_text"`
	HandleChineseChars bool   `json:"handle_chinese_chars"`
	StripAccents       *bool  `json:"strip_accents"` // null: follow lowercase
	Lowercase          bool   `json:"lowercase"`
}

type wordPieceDoc struct {
	Type                    string           `json:"type"`
	UnkToken                string           `json:"unk_token"`
	ContinuingSubwordPrefix string           `json:"continuing_subword_prefix"`
	MaxInputCharsPerWord    int              `json:"max_input_chars_per_word"`
	Vocab                   map[string]int32 `json:"vocab"`
}

// strictly decodes raw into v, naming a field v does not know.
func strictly(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// typeOf reads a component's "type" ("" for null).
func typeOf(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var c struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", err
	}
	return c.Type, nil
}

// Parse reads the contents of a tokenizer.json (see Load).
func Parse(raw []byte) (*Tokenizer, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("parsing tokenizer.json: %w", err)
	}
	known := map[string]bool{"version": true, "truncation": true, "padding": true, "added_tokens": true,
		"normalizer": true, "pre_tokenizer": true, "model": true, "post_processor": true, "decoder": true}
	for k := range top {
		if !known[k] {
			return nil, fmt.Errorf("tokenizer.json: unsupported field %q", k)
		}
	}
	var doc fileDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parsing tokenizer.json: %w", err)
	}
	t := &Tokenizer{}

	typ, err := typeOf(doc.Normalizer)
	if err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	if typ != "BertNormalizer" {
		return nil, fmt.Errorf("normalizer %q is not supported (only BertNormalizer)", typ)
	}
	var n bertNormalizerDoc
	if err := strictly(doc.Normalizer, &n); err != nil {
		return nil, fmt.Errorf("normalizer BertNormalizer: %w", err)
	}
	t.clean, t.chinese, t.lower = n.CleanText, n.HandleChineseChars, n.Lowercase
	t.strip = n.Lowercase
	if n.StripAccents != nil {
		t.strip = *n.StripAccents
	}

	if typ, err = typeOf(doc.PreTokenizer); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	if typ != "BertPreTokenizer" || strictly(doc.PreTokenizer, &struct {
		Type string `json:"type"`
	}{}) != nil {
		return nil, fmt.Errorf("pre_tokenizer %q is not supported (only BertPreTokenizer)", typ)
	}

	if typ, err = typeOf(doc.Model); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if typ != "WordPiece" {
		return nil, fmt.Errorf("model %q is not supported (only WordPiece)", typ)
	}
	var m wordPieceDoc
	if err := strictly(doc.Model, &m); err != nil {
		return nil, fmt.Errorf("model WordPiece: %w", err)
	}
	if err := t.setModel(m); err != nil {
		return nil, err
	}

	for _, a := range doc.AddedTokens {
		if a.SingleWord || a.LStrip || a.RStrip || a.Normalized {
			return nil, fmt.Errorf("added token %q: single_word, lstrip, rstrip and normalized are not supported", a.Content)
		}
		if a.Content == "" {
			return nil, fmt.Errorf("added token %d is empty", a.ID)
		}
		t.added = append(t.added, addedToken{a.Content, a.ID})
		t.addedLead[a.Content[0]] = true
	}
	// Of two tokens that start at one place the longer wins, as in Hugging
	// Face's leftmost-longest matching.
	sort.SliceStable(t.added, func(i, j int) bool { return len(t.added[i].content) > len(t.added[j].content) })

	if err := t.setPostProcessor(doc.PostProcessor, m.Vocab); err != nil {
		return nil, err
	}

	if typ, err = typeOf(doc.Decoder); err != nil {
		return nil, fmt.Errorf("decoder: %w", err)
	}
	// The decoder turns ids back into text, which vault-rag never does; it is
	// still checked so an unknown file is not taken for a BERT one.
	if typ != "" && typ != "WordPiece" {
		return nil, fmt.Errorf("decoder %q is not supported (only WordPiece)", typ)
	}
	return t, nil
}

func (t *Tokenizer) setModel(m wordPieceDoc) error {
	if m.ContinuingSubwordPrefix == "" {
		return fmt.Errorf("model WordPiece: empty continuing_subword_prefix is not supported")
	}
	if m.MaxInputCharsPerWord <= 0 {
		return fmt.Errorf("model WordPiece: max_input_chars_per_word %d", m.MaxInputCharsPerWord)
	}
	unk, ok := m.Vocab[m.UnkToken]
	if !ok {
		return fmt.Errorf("model WordPiece: unk_token %q is not in the vocabulary", m.UnkToken)
	}
	t.unk, t.maxChars = unk, m.MaxInputCharsPerWord
	t.vocab = make(map[string]int32, len(m.Vocab))
	t.cont = make(map[string]int32)
	for k, id := range m.Vocab {
		t.vocab[k] = id
		t.maxPiece = max(t.maxPiece, len(k))
		if rest, ok := strings.CutPrefix(k, m.ContinuingSubwordPrefix); ok {
			t.cont[rest] = id
		}
	}
	return nil
}

// templatePiece is one item of a TemplateProcessing template.
type templatePiece struct {
	SpecialToken *struct {
		ID     string `json:"id"`
		TypeID int    `json:"type_id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID     string `json:"id"`
		TypeID int    `json:"type_id"`
	} `json:"Sequence"`
}

func (p templatePiece) String() string {
	switch {
	case p.SpecialToken != nil:
		return fmt.Sprintf("%s:%d", p.SpecialToken.ID, p.SpecialToken.TypeID)
	case p.Sequence != nil:
		return fmt.Sprintf("$%s:%d", p.Sequence.ID, p.Sequence.TypeID)
	}
	return "?"
}

// setPostProcessor accepts the BERT shapes only: [CLS] $A [SEP] for one text
// and [CLS] $A [SEP] $B [SEP] with type ids 0 0 0 1 1 for a pair, which is the
// layout the caller builds pairs in.
func (t *Tokenizer) setPostProcessor(raw json.RawMessage, vocab map[string]int32) error {
	typ, err := typeOf(raw)
	if err != nil {
		return fmt.Errorf("post_processor: %w", err)
	}
	switch typ {
	case "BertProcessing":
		var p struct {
			Type string `json:"type"`
			Sep  [2]any `json:"sep"`
			Cls  [2]any `json:"cls"`
		}
		if err := strictly(raw, &p); err != nil {
			return fmt.Errorf("post_processor BertProcessing: %w", err)
		}
		cls, ok1 := p.Cls[1].(float64)
		sep, ok2 := p.Sep[1].(float64)
		if !ok1 || !ok2 {
			return fmt.Errorf("post_processor BertProcessing: cls and sep must be [token, id]")
		}
		t.cls, t.sep = int32(cls), int32(sep)
		return nil
	case "TemplateProcessing":
		var p struct {
			Type          string          `json:"type"`
			Single        []templatePiece `json:"single"`
			Pair          []templatePiece `json:"pair"`
			SpecialTokens map[string]struct {
				ID     string   `json:"id"`
				IDs    []int32  `json:"ids"`
				Tokens []string `json:"tokens"`
			} `json:"special_tokens"`
		}
		if err := strictly(raw, &p); err != nil {
			return fmt.Errorf("post_processor TemplateProcessing: %w", err)
		}
		single := fmt.Sprint(p.Single)
		if len(p.Single) != 3 || p.Single[0].SpecialToken == nil || p.Single[2].SpecialToken == nil ||
			fmt.Sprint(p.Single[1]) != "$A:0" || p.Single[0].SpecialToken.TypeID != 0 || p.Single[2].SpecialToken.TypeID != 0 {
			return fmt.Errorf("post_processor TemplateProcessing: single template %s is not [CLS] $A [SEP]", single)
		}
		clsName, sepName := p.Single[0].SpecialToken.ID, p.Single[2].SpecialToken.ID
		wantPair := fmt.Sprint([]string{clsName + ":0", "$A:0", sepName + ":0", "$B:1", sepName + ":1"})
		var got []string
		for _, q := range p.Pair {
			got = append(got, q.String())
		}
		if fmt.Sprint(got) != wantPair {
			return fmt.Errorf("post_processor TemplateProcessing: pair template %v is not %s", got, wantPair)
		}
		id := func(name string) (int32, error) {
			s, ok := p.SpecialTokens[name]
			if !ok || len(s.IDs) != 1 {
				return 0, fmt.Errorf("post_processor TemplateProcessing: special token %q must have exactly one id", name)
			}
			return s.IDs[0], nil
		}
		if t.cls, err = id(clsName); err != nil {
			return err
		}
		t.sep, err = id(sepName)
		return err
	}
	return fmt.Errorf("post_processor %q is not supported (only TemplateProcessing and BertProcessing)", typ)
}

// Specials are the ids the post-processor wraps a text in: [CLS] and [SEP].
func (t *Tokenizer) Specials() (cls, sep int32) { return t.cls, t.sep }

// Encode returns text's ids without special tokens.
func (t *Tokenizer) Encode(text string) []int32 {
	return t.AppendEncode(nil, text)
}

// AppendEncode appends text's ids (without special tokens) to dst.
func (t *Tokenizer) AppendEncode(dst []int32, text string) []int32 {
	var buf []byte
	for len(text) > 0 {
		at, tok := t.nextAdded(text)
		if at < 0 {
			at = len(text)
		}
		if at > 0 {
			buf = t.normalize(buf[:0], text[:at])
			dst = t.words(dst, buf)
		}
		if tok == nil {
			break
		}
		dst = append(dst, tok.id)
		text = text[at+len(tok.content):]
	}
	return dst
}

// EncodeWithSpecials is Encode with the post-processor's [CLS] and [SEP].
func (t *Tokenizer) EncodeWithSpecials(text string) []int32 {
	out := append(make([]int32, 0, len(text)/3+2), t.cls)
	out = t.AppendEncode(out, text)
	return append(out, t.sep)
}

// nextAdded finds the first added token in text: its byte offset and the
// token, or -1 and nil.
func (t *Tokenizer) nextAdded(text string) (int, *addedToken) {
	if len(t.added) == 0 {
		return -1, nil
	}
	for i := 0; i < len(text); i++ {
		if !t.addedLead[text[i]] {
			continue
		}
		for k := range t.added {
			if strings.HasPrefix(text[i:], t.added[k].content) {
				return i, &t.added[k]
			}
		}
	}
	return -1, nil
}

// normalize appends the BertNormalizer's output for s to dst: clean_text,
// handle_chinese_chars, strip_accents (NFD, then nonspacing marks dropped),
// lowercase, in that order.
func (t *Tokenizer) normalize(dst []byte, s string) []byte {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		for i := 0; i < len(s); i++ {
			c := s[i]
			if t.clean {
				if asciiRemoved[c] {
					continue
				}
				if c == '\t' || c == '\n' || c == '\r' {
					c = ' '
				}
			}
			if t.lower && 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
		}
		return dst
	}
	var mid []byte
	for _, r := range s {
		if t.clean {
			if r == 0 || r == utf8.RuneError || removed.has(r) {
				continue
			}
			if spaced.has(r) {
				r = ' '
			}
		}
		if t.chinese && r >= 0x3400 && chinese.has(r) {
			mid = append(mid, ' ')
			mid = utf8.AppendRune(mid, r)
			mid = append(mid, ' ')
			continue
		}
		mid = utf8.AppendRune(mid, r)
	}
	if t.strip {
		mid = norm.NFD.Bytes(mid)
	}
	for i := 0; i < len(mid); {
		r, n := utf8.DecodeRune(mid[i:])
		i += n
		if t.strip && r >= 0x300 && stripped.has(r) {
			continue
		}
		if t.lower {
			if r < utf8.RuneSelf {
				if 'A' <= r && r <= 'Z' {
					r += 'a' - 'A'
				}
			} else if l, ok := lowerFull[r]; ok {
				dst = append(dst, l...)
				continue
			}
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// asciiRemoved is clean_text's removed set below 0x80.
var asciiRemoved = func() (a [utf8.RuneSelf]bool) {
	for c := range a {
		a[c] = removed.has(rune(c))
	}
	return a
}()

var asciiSpace, asciiPunct = func() (s, p [utf8.RuneSelf]bool) {
	for c := range s {
		s[c], p[c] = splitSpace.has(rune(c)), punct.has(rune(c))
	}
	return s, p
}()

// words pre-tokenizes normalized text (split on whitespace, which is
// dropped, and around each punctuation character, which is kept) and appends
// each word's WordPiece ids.
func (t *Tokenizer) words(dst []int32, s []byte) []int32 {
	start := -1 // start of the current word, or -1
	for i := 0; i < len(s); {
		r, n := rune(s[i]), 1
		var space, pun bool
		if r < utf8.RuneSelf {
			space, pun = asciiSpace[r], asciiPunct[r]
		} else {
			r, n = utf8.DecodeRune(s[i:])
			space, pun = splitSpace.has(r), punct.has(r)
		}
		if space || pun {
			if start >= 0 {
				dst = t.piece(dst, s[start:i])
				start = -1
			}
			if pun {
				dst = t.piece(dst, s[i:i+n])
			}
		} else if start < 0 {
			start = i
		}
		i += n
	}
	if start >= 0 {
		dst = t.piece(dst, s[start:])
	}
	return dst
}

// piece appends one word's WordPiece ids: greedy longest match from the left,
// continuation pieces looked up without their prefix, and the whole word
// [UNK] if it is too long or some part of it matches nothing.
func (t *Tokenizer) piece(dst []int32, w []byte) []int32 {
	if utf8.RuneCount(w) > t.maxChars {
		return append(dst, t.unk)
	}
	mark := len(dst)
	for start := 0; start < len(w); {
		vocab := t.vocab
		if start > 0 {
			vocab = t.cont
		}
		end := min(len(w), start+t.maxPiece)
		for end < len(w) && !utf8.RuneStart(w[end]) {
			end--
		}
		found := false
		for end > start {
			if id, ok := vocab[string(w[start:end])]; ok {
				dst = append(dst, id)
				found = true
				break
			}
			end--
			for end > start && !utf8.RuneStart(w[end]) {
				end--
			}
		}
		if !found {
			return append(dst[:mark], t.unk)
		}
		start = end
	}
	return dst
}
