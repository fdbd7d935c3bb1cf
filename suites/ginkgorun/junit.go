package ginkgorun

import (
	"encoding/xml"
	"os"
	"strings"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
)

// writeJUnit writes Ginkgo's JUnit report of a run to path, with one change: Ginkgo writes a
// skip's message as "skipped - REASON", and a spec whose verdict is unknown must read
// "unknown: ..." so that a CI system (or a person) tells it from a property that does not apply.
func writeJUnit(r types.Report, path string) error {
	tmp := path + ".ginkgo"
	defer os.Remove(tmp)
	if err := reporters.GenerateJUnitReportWithConfig(r, tmp, reporters.JunitReportConfig{OmitSuiteSetupNodes: true}); err != nil {
		return err
	}
	data, err := os.ReadFile(tmp)
	if err != nil {
		return err
	}
	var suites reporters.JUnitTestSuites
	if err := xml.Unmarshal(data, &suites); err != nil {
		return err
	}
	for i := range suites.TestSuites {
		for j := range suites.TestSuites[i].TestCases {
			if sk := suites.TestSuites[i].TestCases[j].Skipped; sk != nil {
				if rest, ok := strings.CutPrefix(sk.Message, "skipped - "); ok && strings.HasPrefix(rest, "unknown: ") {
					sk.Message = rest
				}
			}
		}
	}
	out, err := xml.MarshalIndent(suites, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(out, '\n')...), 0o644)
}
