package framework

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// twoHooks is a target whose operation publishes two webhook events, each on a path of its own,
// received by the harness at a fixed address.
const twoHooks = `instances: [http://127.0.0.1:1]
operations:
  - name: orders
    path: /v1/orders
    body: '{"ref": "{{.Ref}}"}'
    publishes:
      - name: order.created
        webhook: {listen: "127.0.0.1:0", path: /created}
        id: {header: Event-Id}
        ref: {jsonpath: $.ref}
      - name: order.paid
        webhook: {listen: "127.0.0.1:0", path: /paid}
        id: {jsonpath: $.id}
        ref: {jsonpath: $.ref}
`

// The kit routes each delivery to the event declared on its path, reads its id and tie, keeps
// what came before the history existed and then records it first, every event an entry of the
// history; an event it cannot read is kept with why.
func TestEventKitRecordsWhatItReceives(t *testing.T) {
	tg, err := targets.Parse("t.yaml", []byte(twoHooks), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := newFaults(tg)
	url, link, err := f.setUpEvents(context.Background(), tg, "test")
	if err != nil {
		t.Fatal(err)
	}
	if link != "" {
		t.Errorf("{{.EventsBroker}} = %q without a lifecycle that uses it", link)
	}
	defer f.events.close()
	if !strings.HasSuffix(url, "/created") || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("{{.EventsURL}} = %q, want the receiver with the first event's path", url)
	}
	base := strings.TrimSuffix(url, "/created")
	post := func(path, id, body string) {
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Event-Id", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatalf("POST %s: %v, %v", path, resp, err)
		}
		resp.Body.Close()
	}
	start := time.Now()
	post("/created", "evt_c1", `{"ref":"r1"}`) // before the history exists
	h := history.New(nil)
	f.events.attach(h)
	post("/paid", "ignored", `{"id":"evt_p1","ref":"r1"}`)
	post("/created", "", `{"ref":"r2"}`) // no Event-Id header: unreadable

	e := &Env{Faults: f, History: h}
	created, paid := tg.Operations[0].Publishes[0], tg.Operations[0].Publishes[1]
	got := e.EventsSeen(created, start)
	if len(got) != 2 || got[0].ID != "evt_c1" || got[0].Tie != "r1" || got[0].Seq != 1 || got[1].Err == "" || got[1].Tie != "r2" {
		t.Errorf("order.created seen %+v", got)
	}
	if p := e.EventsSeen(paid, start); len(p) != 1 || p[0].ID != "evt_p1" || p[0].Seq != 2 {
		t.Errorf("order.paid seen %+v", p)
	}
	if later := e.EventsSeen(created, time.Now()); len(later) != 0 {
		t.Errorf("seen after now: %+v", later)
	}
	all := h.All()
	if len(all) != 3 || !all[0].IsEvent() || all[0].Key != "evt_c1" || all[0].Op != "orders" || all[2].Err == "" || h.Attempts() != 0 {
		t.Errorf("history %+v", all)
	}
	if why := e.EventsUnseen(created); why != "" {
		t.Errorf("EventsUnseen = %q", why)
	}
}
