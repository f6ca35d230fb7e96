module github.com/lakehouse-exporter/lakehouse-exporter/tools/parsebench

go 1.26.8

replace github.com/lakehouse-exporter/lakehouse-exporter => ../..

require (
	github.com/buger/jsonparser v1.6.1
	github.com/bytedance/sonic v1.15.5
	github.com/goccy/go-json v0.12.0
	github.com/lakehouse-exporter/lakehouse-exporter v0.0.0-00010101000000-000000000000
	github.com/minio/simdjson-go v0.4.5
)

require (
	github.com/bytedance/gopkg v0.1.3 // indirect
	github.com/bytedance/sonic/loader v0.5.3 // indirect
	github.com/cloudwego/base64x v0.1.6 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/twitchyliquid64/golang-asm v0.15.1 // indirect
	golang.org/x/arch v0.0.0-20210923205945-b76863e36670 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
