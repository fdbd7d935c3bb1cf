//go:build !linux

package framework

// memoryScratch is "" off Linux: scratch directories go to the OS temp dir.
func memoryScratch() string { return "" }
