package tracing

// Internals the external tests (package tracing_test, which may import
// harness to produce a trace) check against.
var (
	FmtS     = fmtS
	SendTime = sendTime
)
