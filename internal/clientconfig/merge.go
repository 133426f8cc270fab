package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// utf8BOM is the byte-order mark some Windows editors start a file with; it
// is not JSON, so it is set aside while parsing and put back.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// mergeServer returns doc, a client's configuration file, with the server
// entry (raw JSON) under key's object as name. Every other member keeps its
// value and its place; an entry already named name is replaced (replaced
// reports it). An empty doc is an empty object. A doc that is not a JSON
// object, or whose key is not an object, is an error saying where.
func mergeServer(doc []byte, key, name string, entry json.RawMessage) (out []byte, replaced bool, err error) {
	bom := bytes.HasPrefix(doc, utf8BOM)
	doc = bytes.TrimPrefix(doc, utf8BOM)
	indent := detectIndent(doc)
	top := []member{}
	if len(bytes.TrimSpace(doc)) > 0 {
		if top, err = decodeObject(doc); err != nil {
			return nil, false, err
		}
	}
	servers := []member{}
	at := -1
	for i, m := range top {
		if m.key == key {
			at = i
			if servers, err = decodeObject(m.value); err != nil {
				return nil, false, fmt.Errorf("%q is not an object of servers: %w", key, err)
			}
			break
		}
	}
	kept := servers[:0]
	for _, m := range servers {
		switch {
		case m.key != name:
			kept = append(kept, m)
		case !replaced:
			kept = append(kept, member{name, entry})
			replaced = true
		}
		// A later duplicate of name is dropped: clients take the last one,
		// which would hide the new entry.
	}
	if !replaced {
		kept = append(kept, member{name, entry})
	}
	raw, err := encodeObject(kept, "")
	if err != nil {
		return nil, false, err
	}
	if at >= 0 {
		top[at].value = raw
	} else {
		top = append(top, member{key, raw})
	}
	if out, err = encodeObject(top, indent); err != nil {
		return nil, false, err
	}
	if bom {
		out = append(append([]byte{}, utf8BOM...), out...)
	}
	return out, replaced, nil
}

// member is one key and its raw value in a JSON object, kept in file order.
type member struct {
	key   string
	value json.RawMessage
}

// decodeObject reads a JSON object's members in order. A parse error says
// the line and column; JSON with comments (JSONC, which VS Code allows) is
// named as such, since rewriting it would drop them.
func decodeObject(data []byte) ([]member, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		if hasComments(data) {
			return nil, errors.New("it has comments (// or /* */), which --write would lose")
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, se.Offset)
			return nil, fmt.Errorf("not valid JSON: %v (line %d, column %d)", err, line, col)
		}
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("want a JSON object ({...}), found %s", jsonKind(v))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		ms = append(ms, member{tok.(string), raw})
	}
	return ms, nil
}

// encodeObject writes members as an indented JSON object ending in a
// newline; an empty indent writes it compact, without the newline.
func encodeObject(ms []member, indent string) ([]byte, error) {
	if indent == "" {
		var b bytes.Buffer
		b.WriteByte('{')
		for i, m := range ms {
			if i > 0 {
				b.WriteByte(',')
			}
			k, err := marshalJSON(m.key, "")
			if err != nil {
				return nil, err
			}
			b.Write(k)
			b.WriteByte(':')
			if err := json.Compact(&b, m.value); err != nil {
				return nil, err
			}
		}
		b.WriteByte('}')
		return b.Bytes(), nil
	}
	compact, err := encodeObject(ms, "")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", indent); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// marshalJSON is v as JSON without the HTML escaping encoding/json does by
// default (a path with & stays readable), indented by indent unless empty,
// with no trailing newline.
func marshalJSON(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// detectIndent is the indent unit of a JSON file: the leading white space of
// its first indented line, else two spaces.
func detectIndent(doc []byte) string {
	for _, line := range strings.Split(string(doc), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if lead := line[:len(line)-len(trimmed)]; lead != "" && trimmed != "" {
			return lead
		}
	}
	return "  "
}

// hasComments reports whether data has // or /* outside its strings.
func hasComments(data []byte) bool {
	inString, escaped := false, false
	for i, c := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && c == '/' && i+1 < len(data) && (data[i+1] == '/' || data[i+1] == '*'):
			return true
		}
	}
	return false
}

// lineCol is the 1-based line and column of byte offset off in data.
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// jsonKind names the kind of a decoded JSON value, for an error.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "an object"
}
