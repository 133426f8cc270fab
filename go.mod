module github.com/vault-rag/vault-rag

go 1.26.8

require (
	github.com/asg017/sqlite-vec-go-bindings v0.1.6
	github.com/daulet/tokenizers v1.22.1
	github.com/mattn/go-sqlite3 v1.14.53
	github.com/yalue/onnxruntime_go v1.27.0
	google.golang.org/protobuf v1.36.12
	gopkg.in/yaml.v3 v3.0.1
)
