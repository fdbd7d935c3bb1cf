package reports

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestSortWorstFirst(t *testing.T) {
	as := []Anomaly{
		{Kind: KindReplayDiffs, Message: "r1"},
		{Kind: KindServerError, Message: "s1"},
		{Kind: KindDuplicateRecord, Message: "d1"},
		{Kind: Kind("made-up"), Message: "x"},
		{Kind: KindTargetCrashed, Message: "c1"},
		{Kind: KindReplayDiffs, Message: "r2"},
		{Kind: KindForeignResponse, Message: "f1"},
	}
	SortWorstFirst(as)
	var got []string
	for _, a := range as {
		got = append(got, a.Message)
	}
	// Unsafe first in Kinds order (duplicate-record, foreign-response, target-crashed), then the
	// others in Kinds order (replay-differs before server-error), one kind's in the order found,
	// an unknown kind last among the unsafe ones' followers.
	want := []string{"d1", "f1", "c1", "r1", "r2", "s1", "x"}
	if !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}

// causeRun is a run in which a server answers every replay with 502: three properties fail with
// replay-differs in the status, 201 then 502, and one of them also with another anomaly.
func causeRun() *Run {
	replay502 := func(msg string) Anomaly {
		return Anomaly{Kind: KindReplayDiffs, What: "status", Statuses: []int{201, 502}, Message: msg, Seqs: []int64{1, 2}}
	}
	fail := func(as ...Anomaly) Spec { return Spec{Text: "s", Verdict: Fail, Anomalies: as} }
	return &Run{Complete: true, Properties: []Property{
		{Name: "replay", Verdict: Fail, Specs: []Spec{fail(replay502("the replay differs at status 201 != 502"), replay502("again"))}},
		{Name: "race", Verdict: Fail, Specs: []Spec{fail(replay502("a loser differs"),
			Anomaly{Kind: KindDuplicateRecord, Statuses: []int{201, 201}, Message: "2 records"})}},
		{Name: "mismatch", Verdict: Pass, Specs: []Spec{{Text: "s", Verdict: Pass}}},
		{Name: "dropped-response", Verdict: Fail, Specs: []Spec{fail(replay502("the retry differs"),
			Anomaly{Kind: KindReplayDiffs, What: "status", Message: "no statuses: never grouped"})}},
		{Name: "control", Verdict: Fail, Specs: []Spec{fail(Anomaly{Kind: KindDuplicateRecord, Statuses: []int{201, 201}, Message: "only here"})}},
	}}
}

func TestFindCauses(t *testing.T) {
	cs := FindCauses(causeRun())
	if len(cs) != 2 {
		t.Fatalf("causes = %+v, want two (replay-differs 201/502 in three properties, duplicate-record 201/201 in two)", cs)
	}
	c := cs[0]
	if c.Kind != KindReplayDiffs || c.What != "status" || !slices.Equal(c.Statuses, []int{201, 502}) || c.Anomalies != 4 ||
		!slices.Equal(c.Properties, []string{"replay", "race", "dropped-response"}) {
		t.Errorf("first cause = %+v", c)
	}
	want := "3 properties fail with one cause: replay-differs in the status, the first attempt answered 201 and the last answered 502 " +
		"(replay, race, dropped-response; 4 anomalies); e.g. the replay differs at status 201 != 502"
	if got := c.Sentence(); got != want {
		t.Errorf("sentence = %q\nwant       %q", got, want)
	}
	if d := cs[1]; d.Kind != KindDuplicateRecord || !slices.Equal(d.Properties, []string{"race", "control"}) {
		t.Errorf("second cause = %+v", d)
	}
	one := &Run{Properties: causeRun().Properties[:1]}
	if got := FindCauses(one); len(got) != 0 {
		t.Errorf("one property's anomalies make a cause: %+v", got)
	}
}

// TestCausesOpenTheReports: each report names a cause before its table, and report.json keeps it.
func TestCausesOpenTheReports(t *testing.T) {
	r := causeRun()
	r.Causes = FindCauses(r)
	sentence := r.Causes[0].Sentence()
	var md bytes.Buffer
	if err := RenderMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	var html bytes.Buffer
	if err := RenderHTML(&html, r, &HTMLExtras{}); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ out, table string }{
		"terminal": {renderTable(r), "PROPERTY"},
		"markdown": {md.String(), "| property |"},
		"html":     {html.String(), `<h2>Properties</h2>`},
	} {
		i, j := strings.Index(tc.out, "3 properties fail with one cause: replay-differs"), strings.Index(tc.out, tc.table)
		if i < 0 || j < 0 || i > j {
			t.Errorf("%s: the cause (at %d) does not come before the table (at %d):\n%s", name, i, j, tc.out)
		}
	}
	if !strings.Contains(renderTable(r), sentence) {
		t.Errorf("terminal lacks %q", sentence)
	}
	var js bytes.Buffer
	if err := EncodeJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	text := js.String()
	back, err := DecodeJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Causes) != 2 || back.Causes[0].Sentence() != sentence {
		t.Errorf("report.json causes = %+v", back.Causes)
	}
	if !strings.Contains(text, `"statuses": [`) {
		t.Errorf("report.json lacks the anomalies' statuses:\n%s", text)
	}
}
