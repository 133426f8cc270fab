#!/usr/bin/env bash
# deleteat-overlay.sh DIR writes DIR/overlay.json, a `go build -overlay` that
# lets Go's Windows file deletion fall back to the older call under wine.
#
# Go 1.25 and later delete a folder's files (os.RemoveAll, so every
# t.TempDir's cleanup) with FileDispositionInformationEx and flags that wine
# 8.0 answers with STATUS_NOT_IMPLEMENTED ("Invalid function"). Go falls back
# to the older disposition call only on the statuses Windows gives; this adds
# wine's. Windows 10 and later take the first call, so the change is for test
# binaries run under wine only, never for what is shipped.
set -euo pipefail
dir=$1
src=$(go env GOROOT)/src/internal/syscall/windows/at_windows.go
mkdir -p "$dir"
python3 - "$src" "$dir/at_windows.go" <<'PY'
import sys
src, out = sys.argv[1], sys.argv[2]
s = open(src).read()
old = "\t\tSTATUS_NOT_SUPPORTED:     // the file system doesn't support FILE_DISPOSITION_INFORMATION_EX or one of the flags\n"
if s.count(old) != 1:
    sys.exit(f"deleteat-overlay: {src} has changed: the fallback cases of Deleteat were not found")
s = s.replace(old, old.replace("STATUS_NOT_SUPPORTED:", "STATUS_NOT_SUPPORTED,") +
              "\t\tNTStatus(0xC0000002): // STATUS_NOT_IMPLEMENTED: wine 8.0\n")
open(out, "w").write(s)
PY
printf '{"Replace":{"%s":"%s"}}\n' "$src" "$dir/at_windows.go" >"$dir/overlay.json"
