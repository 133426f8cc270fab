package bench

import (
	"strings"
	"testing"
)

// --only keeps the parts of a full run its section names, and nothing else.
func TestSectionParts(t *testing.T) {
	for _, tc := range []struct {
		only string
		want parts
	}{
		{"", parts{reindex: true, throughput: true, latency: true, recall: true, rerank: true}},
		{"reindex", parts{reindex: true}},
		{"throughput", parts{throughput: true}},
		{"rerank", parts{rerank: true}},
		{"latency", parts{latency: true}},
	} {
		got, err := sectionParts(tc.only)
		if err != nil || got != tc.want {
			t.Errorf("sectionParts(%q) = %+v, %v; want %+v", tc.only, got, err, tc.want)
		}
	}
	if _, err := sectionParts("recall"); err == nil || !strings.Contains(err.Error(), `no section "recall" (reindex, throughput, rerank, latency)`) {
		t.Errorf("sectionParts(\"recall\"): %v", err)
	}
}
