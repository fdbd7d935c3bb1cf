// Package embedtest proves that a Go team can run retrysafe from its own test binary: a test
// package with its own Ginkgo suite (suite_test.go) in which suites.RunT runs, from a plain
// TestX and from inside a Ginkgo spec (GinkgoT()), against a reference API the harness starts
// and kills through a lifecycle. It holds no code of its own.
package embedtest
