package main

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/suites/selftest"
	"github.com/retrysafe/retrysafe/targets/reference/consumer"
)

// writeSelftestReports writes a self-test's report directory: selftest.json (the matrix, as
// --json), selftest.md and selftest.html (the matrix, the phases and the slowest jobs, each
// cell with its log). The jobs' logs are already in cells/.
func writeSelftestReports(dir string, res *selftest.Result, stores []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeSelftestJSON(filepath.Join(dir, "selftest.json"), res); err != nil {
		return err
	}
	var matrix bytes.Buffer
	printMatrix(&matrix, res, stores)
	if err := os.WriteFile(filepath.Join(dir, "selftest.md"), []byte(selftestMarkdown(res, matrix.String(), dir)), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "selftest.html"))
	if err != nil {
		return err
	}
	defer f.Close()
	return selftestPage.Execute(f, selftestView(res, matrix.String(), dir))
}

// phaseSummary says how long each phase took and how parallel the parallel one was.
func phaseSummary(res *selftest.Result) string {
	var parts []string
	for _, p := range []string{selftest.PhaseSerial, selftest.PhaseParallel} {
		if d, ok := res.PhaseSeconds[p]; ok {
			s := fmt.Sprintf("%s phase %s", p, (time.Duration(d * float64(time.Second))).Round(time.Second))
			if p == selftest.PhaseParallel {
				s += fmt.Sprintf(", %d at once", res.Parallel)
				if res.PostgreSQLSlots > 0 {
					s += fmt.Sprintf(", %d on PostgreSQL", res.PostgreSQLSlots)
				}
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

// slowJob is one line of the slowest jobs' table.
type slowJob struct {
	Name, Phase, Result, Log string
	Seconds                  float64
}

// slowest lists the n slowest cells (a correct run's time is split among its properties, so
// only cells are listed).
func slowest(res *selftest.Result, n int) []slowJob {
	var out []slowJob
	for _, c := range res.Cells {
		if c.Result == selftest.NA {
			continue
		}
		name := c.Mutant
		if c.Side != "" {
			name = c.Side + " " + name
		}
		if c.Transport != "" {
			name += " [" + c.Transport + "]"
		}
		if c.Shape != "" && c.Shape != string(consumer.ShapeSink) {
			name += " [" + c.Shape + "]"
		}
		out = append(out, slowJob{Name: name + " " + c.Store + " (" + c.Property + ")", Phase: c.Phase, Result: c.Result, Log: c.Log, Seconds: c.Seconds})
	}
	slices.SortStableFunc(out, func(a, b slowJob) int {
		switch {
		case a.Seconds > b.Seconds:
			return -1
		case a.Seconds < b.Seconds:
			return 1
		}
		return 0
	})
	return out[:min(n, len(out))]
}

// relLog is a cell's log path relative to the report directory (for links).
func relLog(dir, log string) string {
	if log == "" {
		return ""
	}
	if rel, err := filepath.Rel(dir, log); err == nil {
		return rel
	}
	return log
}

func selftestMarkdown(res *selftest.Result, matrix, dir string) string {
	var b strings.Builder
	verdict := "PASS"
	if !res.OK() {
		verdict = "FAIL: " + strings.Join(res.Problems(), "; ")
	}
	fmt.Fprintf(&b, "# retrysafe self-test %s\n\n**%s**\n\n", res.RunID, verdict)
	fmt.Fprintf(&b, "Took %.0f s (%s).\n\n", res.Seconds, phaseSummary(res))
	b.WriteString("```\n" + matrix + "```\n\n")
	b.WriteString("## Slowest cells\n\n| cell | phase | result | seconds | log |\n|---|---|---|---:|---|\n")
	for _, j := range slowest(res, 20) {
		fmt.Fprintf(&b, "| %s | %s | %s | %.1f | %s |\n", j.Name, j.Phase, j.Result, j.Seconds, relLog(dir, j.Log))
	}
	if res.Left != nil && !res.Left.Empty() {
		fmt.Fprintf(&b, "\n## Left behind\n\n%s\n", res.Left)
	}
	return b.String()
}

// selftestPageData is what selftest.html shows.
type selftestPageData struct {
	Res     *selftest.Result
	OK      bool
	Verdict string
	Phases  string
	Matrix  string
	Cells   []cellRow
	Slowest []slowJob
}

// cellRow is one cell of the HTML table.
type cellRow struct {
	selftest.Cell
	Name string
	Link string
}

func selftestView(res *selftest.Result, matrix, dir string) selftestPageData {
	d := selftestPageData{Res: res, OK: res.OK(), Verdict: "PASS", Phases: phaseSummary(res), Matrix: matrix, Slowest: slowest(res, 20)}
	if !d.OK {
		d.Verdict = "FAIL: " + strings.Join(res.Problems(), "; ")
	}
	for i := range d.Slowest {
		d.Slowest[i].Log = relLog(dir, d.Slowest[i].Log)
	}
	for _, c := range res.Cells {
		name := c.Mutant
		if c.Transport != "" {
			name += " [" + c.Transport + "]"
		}
		d.Cells = append(d.Cells, cellRow{Cell: c, Name: name, Link: relLog(dir, c.Log)})
	}
	return d
}

var selftestPage = template.Must(template.New("selftest").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>retrysafe self-test {{.Res.RunID}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin-bottom: 2em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
pre { background: #f7f7f7; padding: 1em; overflow-x: auto; }
.pass { color: #060; } .fail { color: #900; font-weight: bold; }
td.survived { background: #f8d0d0; } td.killed { background: #dff3df; }
</style>
</head>
<body>
<h1>retrysafe self-test {{.Res.RunID}}</h1>
<p class="{{if .OK}}pass{{else}}fail{{end}}">{{.Verdict}}</p>
<p>Took {{printf "%.0f" .Res.Seconds}} s ({{.Phases}}).</p>
<h2>Matrix</h2>
<pre>{{.Matrix}}</pre>
<h2>Slowest cells</h2>
<table><tr><th>cell</th><th>phase</th><th>result</th><th>seconds</th></tr>
{{range .Slowest}}<tr><td>{{if .Log}}<a href="{{.Log}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}</td><td>{{.Phase}}</td><td>{{.Result}}</td><td>{{printf "%.1f" .Seconds}}</td></tr>
{{end}}</table>
<h2>Cells</h2>
<table><tr><th>mutant</th><th>side</th><th>shape</th><th>store</th><th>property</th><th>result</th><th>required</th><th>phase</th><th>seconds</th><th>reason</th></tr>
{{range .Cells}}<tr><td>{{if .Link}}<a href="{{.Link}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}</td><td>{{.Side}}</td><td>{{.Shape}}</td><td>{{.Store}}</td><td>{{.Property}}</td><td class="{{.Result}}">{{.Result}}</td><td>{{.Required}}</td><td>{{.Phase}}</td><td>{{printf "%.1f" .Seconds}}</td><td>{{.Reason}}</td></tr>
{{end}}</table>
</body>
</html>
`))
