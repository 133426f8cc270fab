package server

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vault-rag/vault-rag/index"
	"github.com/vault-rag/vault-rag/internal/vault"
)

// MaxFilterBytes bounds each string of a filter (path, type, project,
// status, each topic): no note's value is longer, and a result's scope
// repeats the filter.
const MaxFilterBytes = 1024

// args are a tool call's arguments, already checked against the tool's
// declared parameters: every key is one the tool takes.
type args struct {
	tool   string
	m      map[string]any
	schema mcp.ToolInputSchema // the tool's parameters, as declared
}

// checkArgs refuses arguments that are not an object or that name a parameter
// the tool does not declare, naming it, before any handler reads them. mcp-go
// also advertises additionalProperties:false, but clients need not honour it.
func checkArgs(t mcp.Tool, raw any) (args, error) {
	a := args{tool: t.Name, m: map[string]any{}, schema: t.InputSchema}
	switch v := raw.(type) {
	case nil:
		return a, nil
	case map[string]any:
		a.m = v
	case json.RawMessage:
		if len(v) == 0 || string(v) == "null" {
			return a, nil
		}
		if err := json.Unmarshal(v, &a.m); err != nil {
			return a, fmt.Errorf("%s: arguments must be a JSON object", t.Name)
		}
	default:
		return a, fmt.Errorf("%s: arguments must be a JSON object, not %T", t.Name, raw)
	}
	var unknown []string
	for k := range a.m {
		if _, ok := t.InputSchema.Properties[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		known := make([]string, 0, len(t.InputSchema.Properties))
		for k := range t.InputSchema.Properties {
			known = append(known, k)
		}
		sort.Strings(known)
		takes := "no parameters"
		if len(known) > 0 {
			takes = "parameters " + strings.Join(known, ", ")
		}
		noun := "parameter"
		if len(unknown) > 1 {
			noun = "parameters"
		}
		return a, fmt.Errorf("%s: unknown %s %s (it takes %s)", t.Name, noun, quoteAll(unknown), takes)
	}
	return a, nil
}

// quoteAll quotes the first few of a client's names, each cut as
// vault.QuoteInput cuts it, and counts the rest.
func quoteAll(ss []string) string {
	const most = 5
	var q []string
	for i, s := range ss {
		if i == most {
			q = append(q, fmt.Sprintf("and %d more", len(ss)-most))
			break
		}
		q = append(q, vault.QuoteInput(s))
	}
	return strings.Join(q, ", ")
}

// argSetter is a parameter type that reads its value itself: decode hands
// it the parameter's string ("" when absent), which it checks and converts.
type argSetter interface {
	setArg(name, s string) error
}

var filterType = reflect.TypeFor[index.Filter]()

// decode reads the call's parameters into dst, a pointer to a struct, field
// by field in the fields' order, which is the order their errors are found
// in. Each field names its parameter in an `arg` tag and is read as the
// tool's schema declares that parameter:
//   - a string; one the schema requires must be given and not blank; one
//     with an enum is one of its values, or "";
//   - an integer, within the schema's minimum and maximum;
//   - a boolean.
//
// A field whose type is an argSetter reads its parameter itself, and an
// untagged field of type index.Filter takes the filter parameters
// (filterOptions, filter). An absent parameter leaves its field as it was,
// so dst comes holding the defaults.
func (a args) decode(dst any) error {
	v := reflect.ValueOf(dst).Elem()
	for i := range v.NumField() {
		f, field := v.Field(i), v.Type().Field(i)
		name := field.Tag.Get("arg")
		if name == "" && field.Type == filterType {
			filter, err := a.filter()
			if err != nil {
				return err
			}
			f.Set(reflect.ValueOf(filter))
			continue
		}
		prop, ok := a.schema.Properties[name].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: field %s reads parameter %q, which the tool does not declare", a.tool, field.Name, name)
		}
		if err := a.decodeField(name, prop, f); err != nil {
			return err
		}
	}
	return nil
}

// decodeField reads one parameter, declared by prop, into f.
func (a args) decodeField(name string, prop map[string]any, f reflect.Value) error {
	if setter, ok := f.Addr().Interface().(argSetter); ok {
		s, err := a.str(name)
		if err != nil {
			return err
		}
		return setter.setArg(name, s)
	}
	switch kind := prop["type"]; {
	case kind == "string" && f.Kind() == reflect.String:
		return a.decodeString(name, prop, f)
	case kind == "integer" && f.Kind() == reflect.Int:
		lo, okLo := number(prop["minimum"])
		hi, okHi := number(prop["maximum"])
		if !okLo || !okHi {
			return fmt.Errorf("%s: integer parameter %q has no minimum and maximum", a.tool, name)
		}
		n, err := a.integer(name, int(lo), int(hi), int(f.Int()))
		f.SetInt(int64(n))
		return err
	case kind == "boolean" && f.Kind() == reflect.Bool:
		if !a.present(name) {
			return nil
		}
		b, err := a.boolean(name)
		f.SetBool(b)
		return err
	default:
		return fmt.Errorf("%s: parameter %q, of type %v, cannot be read into a %s", a.tool, name, kind, f.Type())
	}
}

// decodeString reads a string parameter: given and not blank when the schema
// requires it, one of its enum's values (or "") when it has one.
func (a args) decodeString(name string, prop map[string]any, f reflect.Value) error {
	var s string
	var err error
	switch {
	case slices.Contains(a.schema.Required, name):
		s, err = a.requiredStr(name)
	case !a.present(name):
		return nil
	default:
		s, err = a.str(name)
	}
	if err != nil {
		return err
	}
	if enum, ok := prop["enum"].([]string); ok && s != "" && !slices.Contains(enum, s) {
		return fmt.Errorf("parameter %q is %s: it takes %s", name, vault.QuoteInput(s), quoteChoices(enum))
	}
	f.SetString(s)
	return nil
}

// quoteChoices lists the values a parameter takes: "a", "b" or "c".
func quoteChoices(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// present reports whether a parameter was given a non-null value.
func (a args) present(name string) bool {
	v, ok := a.m[name]
	return ok && v != nil
}

// str returns a string parameter, "" when absent.
func (a args) str(name string) (string, error) {
	if !a.present(name) {
		return "", nil
	}
	s, ok := a.m[name].(string)
	if !ok {
		return "", fmt.Errorf("parameter %q must be a string, not %s", name, jsonType(a.m[name]))
	}
	return s, nil
}

// requiredStr returns a string parameter that must be present and not blank.
func (a args) requiredStr(name string) (string, error) {
	if !a.present(name) {
		return "", fmt.Errorf("parameter %q is required", name)
	}
	s, err := a.str(name)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("parameter %q is empty", name)
	}
	return s, nil
}

// integer returns an integer parameter within [lo, hi], def when absent.
func (a args) integer(name string, lo, hi, def int) (int, error) {
	if !a.present(name) {
		return def, nil
	}
	f, ok := number(a.m[name])
	if !ok {
		return 0, fmt.Errorf("parameter %q must be an integer, not %s", name, jsonType(a.m[name]))
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("parameter %q must be an integer, not %v", name, f)
	}
	if f < float64(lo) || f > float64(hi) {
		return 0, fmt.Errorf("parameter %q is %v, outside %d..%d", name, f, lo, hi)
	}
	return int(f), nil
}

// float returns a number parameter within [lo, hi], def when absent.
func (a args) float(name string, lo, hi, def float64) (float64, error) {
	if !a.present(name) {
		return def, nil
	}
	f, ok := number(a.m[name])
	if !ok || math.IsNaN(f) {
		return 0, fmt.Errorf("parameter %q must be a number, not %s", name, jsonType(a.m[name]))
	}
	if f < lo || f > hi {
		return 0, fmt.Errorf("parameter %q is %v, outside %v..%v", name, f, lo, hi)
	}
	return f, nil
}

// boolean returns a boolean parameter, false when absent.
func (a args) boolean(name string) (bool, error) {
	if !a.present(name) {
		return false, nil
	}
	b, ok := a.m[name].(bool)
	if !ok {
		return false, fmt.Errorf("parameter %q must be true or false, not %s", name, jsonType(a.m[name]))
	}
	return b, nil
}

// strList returns an array-of-strings parameter.
func (a args) strList(name string) ([]string, error) {
	if !a.present(name) {
		return nil, nil
	}
	raw, ok := a.m[name].([]any)
	if !ok {
		return nil, fmt.Errorf("parameter %q must be an array of strings, not %s", name, jsonType(a.m[name]))
	}
	out := make([]string, 0, len(raw))
	for i, v := range raw {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("parameter %q: item %d must be a string, not %s", name, i, jsonType(v))
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

var datePattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// date returns a YYYY-MM-DD parameter, "" when absent.
func (a args) date(name string) (string, error) {
	s, err := a.str(name)
	if err != nil || s == "" {
		return s, err
	}
	if _, perr := time.Parse("2006-01-02", s); perr != nil || !datePattern.MatchString(s) {
		return "", fmt.Errorf("parameter %q is %s, not a date (YYYY-MM-DD)", name, vault.QuoteInput(s))
	}
	return s, nil
}

// filter reads the structured filter parameters shared by vault_search and
// vault_list.
func (a args) filter() (index.Filter, error) {
	var f index.Filter
	var err error
	if f.PathPrefix, err = a.str("path"); err != nil {
		return f, err
	}
	if strings.Contains(f.PathPrefix, "\x00") {
		return f, fmt.Errorf("parameter %q contains a NUL byte", "path")
	}
	if f.Type, err = a.str("type"); err != nil {
		return f, err
	}
	if f.Project, err = a.str("project"); err != nil {
		return f, err
	}
	if f.Status, err = a.str("status"); err != nil {
		return f, err
	}
	if f.Topics, err = a.strList("topics"); err != nil {
		return f, err
	}
	for _, p := range []struct {
		name string
		v    string
	}{{"path", f.PathPrefix}, {"type", f.Type}, {"project", f.Project}, {"status", f.Status}} {
		if len(p.v) > MaxFilterBytes {
			return f, fmt.Errorf("parameter %q is %d bytes, over the %d it may have", p.name, len(p.v), MaxFilterBytes)
		}
	}
	for i, t := range f.Topics {
		if len(t) > MaxFilterBytes {
			return f, fmt.Errorf("parameter %q: item %d is %d bytes, over the %d it may have", "topics", i, len(t), MaxFilterBytes)
		}
	}
	if f.DateFrom, err = a.date("date_from"); err != nil {
		return f, err
	}
	if f.DateTo, err = a.date("date_to"); err != nil {
		return f, err
	}
	if f.DateFrom != "" && f.DateTo != "" && f.DateFrom > f.DateTo {
		return f, fmt.Errorf("date_from %s is after date_to %s", f.DateFrom, f.DateTo)
	}
	return f, nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, float32, int, int64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
