package wordpiece_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/vault-rag/vault-rag/eval"
	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/modeltest"
	"github.com/vault-rag/vault-rag/models/wordpiece"
)

// These tests compare the tokenizer with Hugging Face's own (PyPI tokenizers,
// the pinned release scripts/pytok.sh installs under data/pytok), run through
// testdata/hf_encode.py on the same tokenizer.json.

func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func dataDir(t testing.TB) string {
	if d := os.Getenv("VAULT_RAG_DATA"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(t), "data")
}

// tokenizerPath is an installed model's tokenizer.json; a missing one skips
// (fails under VAULT_RAG_REQUIRE_MODELS=1).
func tokenizerPath(t testing.TB, model string) string {
	t.Helper()
	p := filepath.Join(dataDir(t), "models", model, "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		modeltest.Missing(t, "%s not installed (%v); run `make lab-models`", model, err)
	}
	return p
}

func load(t testing.TB, model string) *wordpiece.Tokenizer {
	t.Helper()
	tok, err := wordpiece.Load(tokenizerPath(t, model))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// vocabularies are the two the embedders use: English and Chinese.
var vocabularies = []string{"bge-small-en-v1.5", "bge-small-zh-v1.5"}

// pythonPath is the folder holding the pinned tokenizers release; a missing
// one skips (fails under VAULT_RAG_REQUIRE_MODELS=1).
func pythonPath(t testing.TB) string {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(repoRoot(t), "scripts", "pytok.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^TOKENIZERS_PY_VERSION=(\S+)$`).FindSubmatch(script)
	if m == nil {
		t.Fatal("scripts/pytok.sh pins no TOKENIZERS_PY_VERSION")
	}
	dir := filepath.Join(dataDir(t), "pytok", "tokenizers-"+string(m[1]))
	cmd := exec.Command("python3", "-c", "import tokenizers, sys; sys.exit(tokenizers.__version__ != sys.argv[1])", string(m[1]))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		modeltest.Missing(t, "Hugging Face tokenizers %s not installed in %s (%v: %s); run `make lab-models`", m[1], dir, err, out)
	}
	return dir
}

// hfEncode is Hugging Face's ids for texts, [CLS] and [SEP] included.
func hfEncode(t testing.TB, tokPath string, texts []string) [][]int32 {
	t.Helper()
	pp := pythonPath(t)
	var in bytes.Buffer
	for _, s := range texts {
		in.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(s))))
		in.WriteString(s)
	}
	cmd := exec.Command("python3", filepath.Join(repoRoot(t), "models", "wordpiece", "testdata", "hf_encode.py"), tokPath)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pp)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hf_encode.py: %v: %s", err, stderr.Bytes())
	}
	lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
	if len(texts) == 0 {
		return nil
	}
	if len(lines) != len(texts) {
		t.Fatalf("hf_encode.py answered %d texts of %d", len(lines), len(texts))
	}
	ids := make([][]int32, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal(l, &ids[i]); err != nil {
			t.Fatalf("hf_encode.py line %d: %v", i+1, err)
		}
	}
	return ids
}

// firstDifference compares the tokenizer with want over texts and describes
// the first text that differs, at its first differing position ("" if none).
func firstDifference(tok *wordpiece.Tokenizer, texts []string, want [][]int32) string {
	for i, s := range texts {
		got := tok.EncodeWithSpecials(s)
		if slices.Equal(got, want[i]) {
			continue
		}
		p := 0
		for p < len(got) && p < len(want[i]) && got[p] == want[i][p] {
			p++
		}
		lo, hi := max(0, p-3), p+4
		return fmt.Sprintf("text %d (%d bytes) %.300q: first difference at token %d of %d (Hugging Face has %d): got …%v…, Hugging Face …%v…",
			i, len(s), s, p, len(got), len(want[i]), got[lo:min(hi, len(got))], want[i][lo:min(hi, len(want[i]))])
	}
	return ""
}

// adversarial is text built to find where two BERT tokenizers part.
func adversarial() []string {
	long := strings.Repeat("a", 101)
	texts := []string{
		"", " ", "\t\n\r", "Hello, World!", "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG 0123456789 ~`!@#$%^&*()_+-={}|[]\\:\";'<>?,./", "HELLO world... it's 3.14 o'clock; (yes) [no] {maybe} #tag @user",
		"café naïve résumé Ångström façade Zoë Søren Łódź ŞİŞLİ İstanbul ıi Iİ", "ǅungla ǈ ǋ ß ẞ ﬁ ﬀ Σίσυφος ΣΑΣ ὈΔΥΣΣΕΎΣ",
		"İ", "i̇", "I\u0307", "\u0130\u0130x", "Ⅻ ⓐ Ⓩ 𐐀 𐐨 ꭰ Ꭰ", "K Å Ω",
		"中文分词测试，这是一个句子。", "日本語のテキスト、カタカナとひらがな。", "한국어 텍스트입니다", "漢字かな混じり文 and English 混合 text 123",
		"𠀀𠀁 𪜀 𫝀 𬺰 丽 ⺀ ㄅ 〇", "emoji 😀😃🎉 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇫🇷 ❤️ 🥰 🫠",
		"zero\u200bwidth\u200cjoin\u200dx\ufeffbom\u2060wj", "soft\u00adhyphen", "bidi\u202ertl\u202c\u2066iso\u2069",
		"ctrl\x00nul\x01\x07bell\x1b[0m\x7fdel\u0085nel\u009f", "vt\vff\fend", "nbsp\u00a0thin\u2009ideo\u3000line\u2028para\u2029",
		"private\ue000use\U000f0000", "unassigned\u0378\U0001FFFF\U000E0001tag", "replacement\ufffdchar",
		"combining a\u0301\u0302\u0303 e\u0308 " + strings.Repeat("\u0301", 40) + "x", "hangul 가각 \u1100\u1161\u11a8",
		"Arabic العربية مرحبا، Hebrew עִבְרִית Thai ภาษาไทย Devanagari हिन्दी", "Cyrillic ПРИВЕТ Ёлка Greek ΆΈΉ",
		"math ∑∫√∞ ≤≥ ± × ÷ → ⇒ ° € £ ¥ § ¶ † ‡ • … ‰ ′ ″", "quotes “smart” ‘single’ «guillemets» „low“ —dash– ‐",
		"fullwidth ＡＢＣ１２３！？", "superscript x² H₂O ½ ¼", "url https://example.com/path?q=1&r=2#frag email a.b@c.de",
		"code `func main() { fmt.Println(\"hi\") }` x := y[0]->z", "[CLS] [SEP] [MASK] [UNK] [PAD] a[SEP]b [cls] [SEP][SEP]",
		"word" + long, long, strings.Repeat("b", 100), strings.Repeat("é", 100), strings.Repeat("é", 101),
		strings.Repeat("中", 150), "supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
		"unaffable unbelievable tokenization wordpiece ##prefix ## #", "invalid \xff\xfe bytes \xc3 in\xe4\xb8 words ab\xffcd \xed\xa0\x80 surrogate",
		"\xf0\x9f\x98 truncated emoji", "mixed Ünïcödé ÀÉÎÕÜ àéîõü ÇçÑñ",
	}
	var big strings.Builder
	for i := 0; big.Len() < 20000; i++ {
		fmt.Fprintf(&big, "Sentence %d with Ünïcode, 中文 and punctuation!? ", i)
	}
	texts = append(texts, big.String(), strings.Repeat("lorem ipsum dolor sit amet ", 800))
	return texts
}

type fixture struct {
	Model string    `json:"model"`
	Texts []string  `json:"texts"` // Go-quoted, since a text may not be UTF-8
	IDs   [][]int32 `json:"ids"`
}

const fixturePath = "testdata/adversarial.json"

// encodeFixture writes the fixture one text, and one text's ids, a line.
func encodeFixture(t *testing.T, fs []fixture) []byte {
	var b bytes.Buffer
	line := func(prefix string, v any, last bool) {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(prefix)
		b.Write(raw)
		if !last {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("[\n")
	for k, f := range fs {
		b.WriteString(" {\n")
		line(`  "model": `, f.Model, false)
		b.WriteString("  \"texts\": [\n")
		for i, s := range f.Texts {
			line("   ", s, i == len(f.Texts)-1)
		}
		b.WriteString("  ],\n  \"ids\": [\n")
		for i, ids := range f.IDs {
			line("   ", ids, i == len(f.IDs)-1)
		}
		b.WriteString("  ]\n }")
		if k < len(fs)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.Bytes()
}

func quoteAll(texts []string) []string {
	q := make([]string, len(texts))
	for i, s := range texts {
		q[i] = fmt.Sprintf("%q", s)
	}
	return q
}

// TestAdversarialFixture checks the adversarial set against Hugging Face's
// ids as recorded in testdata (no Python needed); VAULT_RAG_UPDATE_FIXTURE=1
// records them anew from the pinned release.
func TestAdversarialFixture(t *testing.T) {
	texts := adversarial()
	if os.Getenv("VAULT_RAG_UPDATE_FIXTURE") == "1" {
		var fs []fixture
		for _, m := range vocabularies {
			fs = append(fs, fixture{Model: m, Texts: quoteAll(texts), IDs: hfEncode(t, tokenizerPath(t, m), texts)})
		}
		if err := os.WriteFile(fixturePath, encodeFixture(t, fs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	var fs []fixture
	if err := json.Unmarshal(raw, &fs); err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(vocabularies) {
		t.Fatalf("fixture has %d vocabularies, want %d", len(fs), len(vocabularies))
	}
	for _, f := range fs {
		if !slices.Equal(f.Texts, quoteAll(texts)) {
			t.Fatalf("%s: the fixture's texts are not adversarial()'s; record it anew (VAULT_RAG_UPDATE_FIXTURE=1)", fixturePath)
		}
		if d := firstDifference(load(t, f.Model), texts, f.IDs); d != "" {
			t.Errorf("%s, against the recorded Hugging Face ids: %s", f.Model, d)
		}
	}
}

// TestAdversarialAgainstHF runs the adversarial set through the pinned
// release itself, in every installed BERT tokenizer.json.
func TestAdversarialAgainstHF(t *testing.T) {
	texts := adversarial()
	models := append(slices.Clone(vocabularies), "all-MiniLM-L6-v2-standin")
	for _, m := range models {
		p := tokenizerPath(t, m)
		if d := firstDifference(load(t, m), texts, hfEncode(t, p, texts)); d != "" {
			t.Errorf("%s: %s", m, d)
		}
	}
}

// TestEveryCodePointAgainstHF tokenizes every code point alone and attached
// to a letter, so each character class and lowercase mapping is checked.
func TestEveryCodePointAgainstHF(t *testing.T) {
	if testing.Short() {
		t.Skip("tokenizes 2.2 million characters twice")
	}
	var texts []string
	var alone, attached strings.Builder
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		alone.WriteRune(r)
		alone.WriteByte(' ')
		attached.WriteString("Ab")
		attached.WriteRune(r)
		attached.WriteString("c ")
		if r%64 == 63 || r == 0x10FFFF {
			texts = append(texts, alone.String(), attached.String())
			alone.Reset()
			attached.Reset()
		}
	}
	for _, m := range vocabularies {
		p := tokenizerPath(t, m)
		if d := firstDifference(load(t, m), texts, hfEncode(t, p, texts)); d != "" {
			t.Errorf("%s: %s", m, d)
		}
	}
}

// countingEmbedder lets the indexer's chunker count with the tokenizer under
// test, so the chunks are the ones that tokenizer's embedder would get.
type countingEmbedder struct{ tok *wordpiece.Tokenizer }

func (e countingEmbedder) Name() string             { return "wordpiece-test" }
func (e countingEmbedder) Dim() int                 { return 1 }
func (e countingEmbedder) CountTokens(s string) int { return len(e.tok.Encode(s)) }
func (e countingEmbedder) Tokens(s string) []int32  { return e.tok.Encode(s) }
func (e countingEmbedder) Window() int              { return 510 }
func (e countingEmbedder) EmbedPassages(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("not an embedder")
}
func (e countingEmbedder) EmbedTokens(context.Context, [][]int32) ([][]float32, error) {
	return nil, errors.New("not an embedder")
}

// datasetsDir is the shared datasets folder: VAULT_RAG_DATASETS, else
// ../shared/datasets beside the checkout.
func datasetsDir(t testing.TB) string {
	d := os.Getenv("VAULT_RAG_DATASETS")
	if d == "" {
		d = filepath.Join(repoRoot(t), "..", "shared", "datasets")
	}
	if _, err := os.Stat(d); err != nil {
		modeltest.Missing(t, "datasets not found (%v); set VAULT_RAG_DATASETS", err)
	}
	return d
}

// TestDatasetChunksAgainstHF gives both tokenizers every chunk text the
// indexer embeds, in every dataset, in both vocabularies.
func TestDatasetChunksAgainstHF(t *testing.T) {
	if testing.Short() {
		t.Skip("tokenizes every dataset twice")
	}
	root := datasetsDir(t)
	pythonPath(t)
	work := t.TempDir()
	vaults := map[string]string{}
	for _, name := range []string{"cranfield", "cacm"} {
		ds, err := eval.LoadBEIR(filepath.Join(root, name), filepath.Join(work, name))
		if err != nil {
			t.Fatal(err)
		}
		vaults[name] = ds.VaultPath
	}
	for _, name := range []string{"obsidian-dev-docs", "blue-book", "obsidian-help-zh"} {
		vaults[name] = filepath.Join(root, name, "vault")
	}
	for _, m := range vocabularies {
		p := tokenizerPath(t, m)
		tok := load(t, m)
		for name, v := range vaults {
			texts, err := index.ChunkTexts(t.Context(), v, countingEmbedder{tok})
			if err != nil {
				t.Fatal(err)
			}
			if len(texts) == 0 {
				t.Fatalf("%s: no chunks", name)
			}
			if d := firstDifference(tok, texts, hfEncode(t, p, texts)); d != "" {
				t.Errorf("%s, %s (%d chunks): %s", m, name, len(texts), d)
			} else {
				t.Logf("%s, %s: %d chunks agree", m, name, len(texts))
			}
		}
	}
}
