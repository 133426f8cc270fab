package server

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vault-rag/vault-rag/internal/vault"
)

var updateWire = flag.Bool("update", false, "rewrite testdata/wire from the server's answer types and tool definitions")

// wireDir holds, per tool, the JSON schema of its input (as tools/list
// gives it) and of its answer (from its Go type), and the schemas of the
// other answers: a resource's _meta and /health.
const wireDir = "testdata/wire"

// wireAnswers are the server's answers that are not a tool's, by file name.
var wireAnswers = map[string]reflect.Type{
	// resources/read: the note's text, and the rest of vault_read's answer
	// as _meta (readResource).
	"resource_meta": reflect.TypeFor[ReadResult](),
	"health":        reflect.TypeFor[Health](),
}

// TestToolSpecs: every tool has a name, a handler, an answer type and a time
// limit, and no two share a name.
func TestToolSpecs(t *testing.T) {
	specs := toolSpecs(vault.Languages{})
	if len(specs) == 0 {
		t.Fatal("no tools")
	}
	seen := map[string]bool{}
	for i, sp := range specs {
		name := sp.def.Name
		switch {
		case name == "":
			t.Errorf("tool %d has no name", i)
		case seen[name]:
			t.Errorf("tool %s is listed twice", name)
		}
		seen[name] = true
		if sp.handle == nil {
			t.Errorf("tool %s has no handler", name)
		}
		if sp.answer == nil {
			t.Errorf("tool %s has no answer type", name)
		}
		if sp.limit == nil || sp.limit(Options{RequestTimeout: time.Second, ReindexTimeout: time.Minute}) <= 0 {
			t.Errorf("tool %s has no time limit", name)
		}
		if sp.def.Description == "" {
			t.Errorf("tool %s has no description", name)
		}
	}
	if got := Tools(vault.Languages{}, AllTools()); len(got) != len(specs) {
		t.Errorf("Tools lists %d tools, toolSpecs %d", len(got), len(specs))
	}
}

// TestWireSchema compares every answer's schema, and every tool's input
// schema, with testdata/wire (`go test ./server -run TestWireSchema -update`
// rewrites it): a field renamed, retyped, made optional or dropped fails here,
// naming the tool and the field, and docs/mcp.md is then to be updated with
// it. It also fails when an answer reaches a struct of another package,
// whose JSON tags that package could change.
func TestWireSchema(t *testing.T) {
	want := map[string]any{}
	known := map[string]bool{}
	for _, sp := range toolSpecs(vault.Languages{}) {
		known[sp.def.Name] = true
		answer, err := schemaOf(sp.answer)
		if err != nil {
			t.Errorf("%s: %v", sp.def.Name, err)
			continue
		}
		input, err := json.Marshal(sp.def.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		want[sp.def.Name] = ordered{{"input", json.RawMessage(input)}, {"answer", answer}}
	}
	for name, typ := range wireAnswers {
		known[name] = true
		answer, err := schemaOf(typ)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want[name] = ordered{{"answer", answer}}
	}
	if *updateWire {
		if err := os.RemoveAll(wireDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(wireDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, v := range want {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, raw, "", "  "); err != nil {
			t.Fatal(err)
		}
		pretty.WriteByte('\n')
		file := filepath.Join(wireDir, name+".json")
		if *updateWire {
			if err := os.WriteFile(file, pretty.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		golden, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v (run `go test ./server -run TestWireSchema -update` to write it)", name, err)
			continue
		}
		if bytes.Equal(golden, pretty.Bytes()) {
			continue
		}
		var g, c any
		if err := json.Unmarshal(golden, &g); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		diffs := jsonDiff("", g, c)
		if len(diffs) == 0 {
			diffs = []string{"the order of fields changed"}
		}
		t.Errorf("%s's wire format is not %s's:\n  %s\nif intended, update docs/mcp.md and run `go test ./server -run TestWireSchema -update`",
			name, file, strings.Join(diffs, "\n  "))
	}
	entries, err := os.ReadDir(wireDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !known[strings.TrimSuffix(e.Name(), ".json")] {
			t.Errorf("%s: no tool or answer of that name (run -update to remove it)", filepath.Join(wireDir, e.Name()))
		}
	}
}

// ordered is a JSON object that keeps its keys in the order given: a
// schema's properties in the order the answer writes them.
type ordered []kv

type kv struct {
	key string
	val any
}

func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.key)
		v, err := json.Marshal(kv.val)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
)

// schemaOf is the JSON schema of what encoding/json writes for a value of
// type t: the properties of an object in the order they are written,
// "required" for those written even when empty (no omitempty), and "null"
// among the types of what may be written as null (pointers, slices and maps
// without omitempty). A struct of another package is an error (but
// time.Time, a string in RFC 3339).
func schemaOf(t reflect.Type) (any, error) { return schemaAt(t, "answer", false) }

func schemaAt(t reflect.Type, at string, omitempty bool) (any, error) {
	nullable := func(typ string) any {
		if omitempty {
			return typ
		}
		return []string{typ, "null"}
	}
	if t == timeType {
		return ordered{{"type", "string"}, {"format", "date-time"}}, nil
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		return nil, fmt.Errorf("%s is %s, which writes its own JSON", at, t)
	}
	switch t.Kind() {
	case reflect.Bool:
		return ordered{{"type", "boolean"}}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return ordered{{"type", "integer"}}, nil
	case reflect.Float32, reflect.Float64:
		return ordered{{"type", "number"}}, nil
	case reflect.String:
		return ordered{{"type", "string"}}, nil
	case reflect.Pointer:
		inner, err := schemaAt(t.Elem(), at, omitempty)
		if err != nil {
			return nil, err
		}
		if o, ok := inner.(ordered); ok && !omitempty && len(o) > 0 && o[0].key == "type" {
			if s, ok := o[0].val.(string); ok {
				o = slices.Clone(o)
				o[0].val = []string{s, "null"}
				return o, nil
			}
		}
		return inner, nil
	case reflect.Slice, reflect.Array:
		items, err := schemaAt(t.Elem(), at+"[]", false)
		if err != nil {
			return nil, err
		}
		return ordered{{"type", nullable("array")}, {"items", items}}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s is %s: a map's keys must be strings", at, t)
		}
		vals, err := schemaAt(t.Elem(), at+"{}", false)
		if err != nil {
			return nil, err
		}
		return ordered{{"type", nullable("object")}, {"additionalProperties", vals}}, nil
	case reflect.Struct:
		if t.PkgPath() != reflect.TypeFor[Health]().PkgPath() {
			return nil, fmt.Errorf("%s is %s, another package's type: give the server its own (wire.go)", at, t)
		}
		props, required, err := fieldsOf(t, at)
		if err != nil {
			return nil, err
		}
		out := ordered{{"type", "object"}, {"properties", props}}
		if len(required) > 0 {
			out = append(out, kv{"required", required})
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s is %s, which the schema does not describe", at, t)
}

// fieldsOf lists a struct's JSON fields as encoding/json writes them,
// embedded structs' fields in place.
func fieldsOf(t reflect.Type, at string) (ordered, []string, error) {
	var props ordered
	var required []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if et.PkgPath() != t.PkgPath() {
					return nil, nil, fmt.Errorf("%s embeds %s, another package's type: give the server its own (wire.go)", at, et)
				}
				p, r, err := fieldsOf(et, at)
				if err != nil {
					return nil, nil, err
				}
				props, required = append(props, p...), append(required, r...)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		omit := slices.Contains(strings.Split(opts, ","), "omitempty")
		s, err := schemaAt(f.Type, at+"."+name, omit)
		if err != nil {
			return nil, nil, err
		}
		props = append(props, kv{name, s})
		if !omit {
			required = append(required, name)
		}
	}
	return props, required, nil
}

// jsonDiff lists where two decoded JSON schemas differ, by the path of the
// field in the answer (or the input): "answer.notes[].heading: removed".
func jsonDiff(at string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if reflect.DeepEqual(a, b) {
			return nil
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		return []string{fmt.Sprintf("%s: was %s, is %s", at, ja, jb)}
	}
	var out []string
	for _, k := range unionKeys(am, bm) {
		av, ain := am[k]
		bv, bin := bm[k]
		switch k {
		case "properties":
			out = append(out, fieldsDiff(at, av, bv)...)
			continue
		case "required":
			out = append(out, requiredDiff(at, av, bv)...)
			continue
		}
		p := join(at, k)
		switch k {
		case "items":
			p = at + "[]"
		case "additionalProperties":
			p = at + "{}"
		}
		switch {
		case !bin:
			out = append(out, p+": removed")
		case !ain:
			out = append(out, p+": added")
		default:
			out = append(out, jsonDiff(p, av, bv)...)
		}
	}
	return out
}

func fieldsDiff(at string, a, b any) []string {
	am, _ := a.(map[string]any)
	bm, _ := b.(map[string]any)
	var out []string
	for _, k := range unionKeys(am, bm) {
		av, ain := am[k]
		bv, bin := bm[k]
		switch {
		case !bin:
			out = append(out, join(at, k)+": removed")
		case !ain:
			out = append(out, join(at, k)+": added")
		default:
			out = append(out, jsonDiff(join(at, k), av, bv)...)
		}
	}
	return out
}

// requiredDiff names the fields that became optional (omitempty: left out
// when empty) or required.
func requiredDiff(at string, a, b any) []string {
	set := func(v any) map[string]bool {
		out := map[string]bool{}
		list, _ := v.([]any)
		for _, x := range list {
			if s, ok := x.(string); ok {
				out[s] = true
			}
		}
		return out
	}
	as, bs := set(a), set(b)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(as)) {
		if !bs[k] {
			out = append(out, join(at, k)+": no longer required (now left out when empty, or gone)")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(bs)) {
		if !as[k] {
			out = append(out, join(at, k)+": now required")
		}
	}
	return out
}

// join is the path of field k below at.
func join(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

// unionKeys are the keys of a and b, sorted.
func unionKeys(a, b map[string]any) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return slices.Sorted(maps.Keys(keys))
}
