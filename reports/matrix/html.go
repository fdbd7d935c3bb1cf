package matrix

import (
	"html/template"
	"io"
)

// htmlPage renders a Table as one self-contained page.
var htmlPage = template.Must(template.New("matrix").Funcs(template.FuncMap{
	"class": markClass,
	"text":  htmlCellText,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>retrysafe matrix</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
th small { font-weight: normal; color: #666; }
td.row { font-family: ui-monospace, monospace; }
td.same { }
td.different { background: #fff4cc; }
td.unsafe { background: #f8d0d0; color: #900; font-weight: bold; }
td.notprobed, td.empty { color: #999; font-style: italic; }
p.legend, ul { color: #444; }
</style>
</head>
<body>
<h1>retrysafe matrix</h1>
<table>
<thead><tr><th>behaviour</th>{{range .Columns}}<th title="{{.Source}}">{{.Name}}<br><small>{{.Kind}}</small></th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr><td class="row">{{.Name}}</td>{{range .Cells}}<td class="{{class .Mark}}"{{if .Unsafe}} title="unsafe: {{.Unsafe}}"{{else if .Note}} title="{{.Note}}"{{end}}>{{text .}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
<p class="legend">{{.Legend}}</p>
{{with .Unsafe}}<h2>Unsafe</h2>
<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
</body>
</html>
`))

// markClass is the CSS class of a mark.
func markClass(m Mark) string {
	switch m {
	case Unsafe:
		return "unsafe"
	case Different:
		return "different"
	case NotProbed:
		return "notprobed"
	case Empty:
		return "empty"
	}
	return "same"
}

// htmlCellText is a cell's text in HTML (escaped by the template).
func htmlCellText(c Cell) string {
	switch c.Mark {
	case Empty:
		return "–"
	case Unsafe:
		return "✗ " + c.Value
	case Different:
		return "≠ " + c.Value
	}
	return c.Value
}

// WriteHTML writes the table as a self-contained HTML page: unsafe cells in red, different
// ones in yellow, with the reason or note of each cell as its tooltip.
func (t *Table) WriteHTML(w io.Writer) error {
	return htmlPage.Execute(w, struct {
		*Table
		Legend string
		Unsafe []string
	}{t, Legend, t.Unsafe()})
}
