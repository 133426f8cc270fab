package models

import (
	"os"
	"runtime"
	"sort"
	"strings"

	ort "github.com/yalue/onnxruntime_go"
)

// RuntimeVersion is the loaded ONNX Runtime's version ("" until a model has
// loaded it).
func RuntimeVersion() string {
	if !ort.IsInitialized() {
		return ""
	}
	return ort.GetVersion()
}

// isaPrefixes are the CPU feature flags ONNX Runtime's kernel dispatch reads
// (MLAS on x86-64: AVX, AVX2/FMA, AVX-512, VNNI, AMX; on arm64: NEON dot
// product, i8mm, SVE, bf16). Two machines that agree on these run the same
// kernels; the model name of the CPU says nothing once a hypervisor hides it.
var isaPrefixes = []string{"avx", "fma", "f16c", "amx", "asimd", "sve", "i8mm", "bf16"}

// ISA lists this CPU's instruction-set extensions that change which ONNX
// Runtime kernels run, sorted, as "arch: flag flag ...".
func ISA() string {
	return isaFrom(runtime.GOARCH, readCPUInfo())
}

func readCPUInfo() string {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	return string(raw)
}

// isaFrom extracts the relevant flags from /proc/cpuinfo text (the first
// "flags" line on x86, "Features" on arm).
func isaFrom(arch, cpuinfo string) string {
	var flags []string
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if k = strings.TrimSpace(k); k != "flags" && k != "Features" {
			continue
		}
		seen := map[string]bool{}
		for _, f := range strings.Fields(v) {
			for _, p := range isaPrefixes {
				if strings.HasPrefix(f, p) && !seen[f] {
					seen[f] = true
					flags = append(flags, f)
				}
			}
		}
		break
	}
	sort.Strings(flags)
	if len(flags) == 0 {
		return arch + ": unknown"
	}
	return arch + ": " + strings.Join(flags, " ")
}
