//go:build !crashtest

package command

// crashPoint is the crash-injection hook of killhook.go, compiled out: a
// build without the crashtest tag reads no environment variable and never
// kills itself.
func crashPoint(string) {}
