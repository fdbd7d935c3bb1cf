package ginkgorun

import (
	"encoding/xml"
	"os"
	"strings"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/retrysafe/retrysafe/reports"
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

// WriteJUnitOf writes a JUnit report of a run that Ginkgo did not drive (retrysafe merge): one
// test case per spec, in the same shape as a Ginkgo run's (a failure, an unknown as a skip whose
// message starts "unknown: ", a skip with its reason).
func WriteJUnitOf(run *reports.Run, path string) error {
	suite := reporters.JUnitTestSuite{Name: "retrysafe", Package: run.Target.Name, Timestamp: run.Started.Format("2006-01-02T15:04:05")}
	for _, p := range run.Properties {
		for _, sp := range p.Specs {
			tc := reporters.JUnitTestCase{Name: "[It] " + p.Name + " " + sp.Text, Classname: "retrysafe", Status: string(sp.Verdict),
				Time: sp.Duration.Seconds()}
			switch sp.Verdict {
			case reports.Fail:
				tc.Failure = &reporters.JUnitFailure{Message: firstLine(sp.Failure), Type: "failed", Description: sp.Failure}
				suite.Failures++
			case reports.Unknown:
				tc.Skipped = &reporters.JUnitSkipped{Message: "unknown: " + sp.Failure}
				suite.Skipped++
			case reports.Skipped:
				tc.Skipped = &reporters.JUnitSkipped{Message: sp.Failure}
				suite.Skipped++
			}
			suite.TestCases = append(suite.TestCases, tc)
			suite.Tests++
			suite.Time += tc.Time
		}
	}
	suites := reporters.JUnitTestSuites{Tests: suite.Tests, Failures: suite.Failures, Time: suite.Time, TestSuites: []reporters.JUnitTestSuite{suite}}
	out, err := xml.MarshalIndent(suites, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(out, '\n')...), 0o644)
}
