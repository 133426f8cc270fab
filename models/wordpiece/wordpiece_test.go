package wordpiece_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/models/wordpiece"
)

// tinyJSON is a complete BERT tokenizer.json over a small vocabulary, as
// Hugging Face writes one; edit changes the decoded document first.
func tinyJSON(t *testing.T, edit func(doc map[string]any)) []byte {
	t.Helper()
	vocab := map[string]int{}
	for i, w := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "aff", "able",
		"hello", ",", "!", "##s", "word", "cafe", "中", "i", "a", "##a", "##b", "b"} {
		vocab[w] = i
	}
	special := func(id int, s string) map[string]any {
		return map[string]any{"id": id, "content": s, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
	}
	doc := map[string]any{
		"version":       "1.0",
		"truncation":    map[string]any{"direction": "Right", "max_length": 4, "strategy": "LongestFirst", "stride": 0},
		"padding":       nil,
		"added_tokens":  []any{special(0, "[PAD]"), special(1, "[UNK]"), special(2, "[CLS]"), special(3, "[SEP]"), special(4, "[MASK]")},
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{
			"type": "TemplateProcessing",
			"single": []any{
				map[string]any{"SpecialToken": map[string]any{"id": "[CLS]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 0}},
			},
			"pair": []any{
				map[string]any{"SpecialToken": map[string]any{"id": "[CLS]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "B", "type_id": 1}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 1}},
			},
			"special_tokens": map[string]any{
				"[CLS]": map[string]any{"id": "[CLS]", "ids": []int{2}, "tokens": []string{"[CLS]"}},
				"[SEP]": map[string]any{"id": "[SEP]", "ids": []int{3}, "tokens": []string{"[SEP]"}},
			},
		},
		"decoder": map[string]any{"type": "WordPiece", "prefix": "##", "cleanup": true},
		"model": map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
			"max_input_chars_per_word": 10, "vocab": vocab},
	}
	if edit != nil {
		edit(doc)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestTinyVocabulary(t *testing.T) {
	tok, err := wordpiece.Parse(tinyJSON(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if cls, sep := tok.Specials(); cls != 2 || sep != 3 {
		t.Errorf("Specials = %d, %d, want 2, 3", cls, sep)
	}
	tests := []struct {
		text string
		want []int32
	}{
		{"", nil},
		{"unaffable", []int32{5, 6, 7}},           // greedy longest match, ## pieces
		{"Hello, WORLD!", []int32{10, 11, 1, 12}}, // lowercase, punctuation isolated, unknown word
		{"helloworld", []int32{1}},                // a word with an unmatched rest is [UNK] whole
		{"Café\u200b\tword", []int32{15, 14}},     // accent stripped, zero-width dropped, tab splits
		{"a中b", []int32{18, 16, 21}},              // Chinese characters split off
		{"aaaaaaaaaa", append([]int32{18}, slices.Repeat([]int32{19}, 9)...)}, // "a", nine "##a"
		{"aaaaaaaaaaa", []int32{1}},               // over max_input_chars_per_word
		{"İ", []int32{17}},                        // NFD then the dot stripped, then lowercased
		{"a[SEP]b [MASK]", []int32{18, 3, 21, 4}}, // special tokens matched in raw text
		{"[sep]", []int32{1, 1, 1}},               // only as written: "[", "sep", "]"
		{"words\xff", []int32{14, 13}},            // an invalid byte is U+FFFD, which clean_text drops
	}
	for _, tc := range tests {
		if got := tok.Encode(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	if got := tok.EncodeWithSpecials("hello"); !slices.Equal(got, []int32{2, 10, 3}) {
		t.Errorf("EncodeWithSpecials = %v", got)
	}
}

func TestRejectsWhatItDoesNotImplement(t *testing.T) {
	tests := []struct {
		name, want string
		edit       func(doc map[string]any)
	}{
		{"unknown field", `"extra"`, func(d map[string]any) { d["extra"] = 1 }},
		{"normalizer", `"Sequence"`, func(d map[string]any) { d["normalizer"] = map[string]any{"type": "Sequence"} }},
		{"no normalizer", "normalizer", func(d map[string]any) { d["normalizer"] = nil }},
		{"normalizer option", "unknown field", func(d map[string]any) { d["normalizer"].(map[string]any)["nfc"] = true }},
		{"pre-tokenizer", `"Whitespace"`, func(d map[string]any) { d["pre_tokenizer"] = map[string]any{"type": "Whitespace"} }},
		{"model", `"BPE"`, func(d map[string]any) { d["model"] = map[string]any{"type": "BPE"} }},
		{"unk not in vocab", "unk_token", func(d map[string]any) { d["model"].(map[string]any)["unk_token"] = "<unk>" }},
		{"post-processor", `"RobertaProcessing"`, func(d map[string]any) { d["post_processor"] = map[string]any{"type": "RobertaProcessing"} }},
		{"pair template", "pair template", func(d map[string]any) {
			pp := d["post_processor"].(map[string]any)
			pp["pair"] = pp["single"]
		}},
		{"decoder", `"ByteLevel"`, func(d map[string]any) { d["decoder"] = map[string]any{"type": "ByteLevel"} }},
		{"normalized added token", "normalized", func(d map[string]any) {
			d["added_tokens"] = []any{map[string]any{"id": 4, "content": "[MASK]", "normalized": true}}
		}},
		{"lstrip added token", "lstrip", func(d map[string]any) {
			d["added_tokens"] = []any{map[string]any{"id": 4, "content": "[MASK]", "lstrip": true}}
		}},
	}
	for _, tc := range tests {
		_, err := wordpiece.Parse(tinyJSON(t, tc.edit))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.want)
		}
	}
}
