package consumer

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Where a delivery carries its event id (IDFrom.In).
const (
	// IDInDefault: the body of a webhook delivery, the message id of a queue message.
	IDInDefault = ""
	// IDInTransport: the queue transport's message id (AMQP message_id, JetStream Nats-Msg-Id).
	IDInTransport = "transport"
	// IDInHeader: a header of the webhook request or of the queue message (IDFrom.Header).
	IDInHeader = "header"
	// IDInBody: the body's "id" field.
	IDInBody = "body"
)

// IDFrom says where a delivery carries its event id.
type IDFrom struct {
	In     string
	Header string
}

// ParseIDFrom parses `transport`, `body` or `header:NAME`.
func ParseIDFrom(s string) (IDFrom, error) {
	switch name, ok := strings.CutPrefix(s, "header:"); {
	case s == "":
		return IDFrom{}, nil
	case s == IDInTransport, s == IDInBody:
		return IDFrom{In: s}, nil
	case ok && name != "":
		return IDFrom{In: IDInHeader, Header: http.CanonicalHeaderKey(name)}, nil
	}
	return IDFrom{}, fmt.Errorf("%q: want transport, body or header:NAME", s)
}

// String is the form ParseIDFrom reads.
func (f IDFrom) String() string {
	if f.In == IDInHeader {
		return "header:" + f.Header
	}
	return f.In
}

// operationHeader is the operation a delivery's header names (Config.OperationHeader), or "".
func (c *Consumer) operationHeader(get func(string) string) string {
	if c.cfg.OperationHeader == "" {
		return ""
	}
	return strings.TrimSpace(get(c.cfg.OperationHeader))
}

// errNoID is the rejection of a delivery without the id where IDFrom says it travels.
var errNoID = errors.New("the delivery carries no event id where the consumer reads it")

// webhookID is the event id a webhook delivery carries in its headers ("" = read it from the
// body).
func (c *Consumer) webhookID(h http.Header) (string, error) {
	if c.cfg.IDFrom.In != IDInHeader {
		return "", nil
	}
	id := strings.TrimSpace(h.Get(c.cfg.IDFrom.Header))
	if id == "" {
		return "", fmt.Errorf("%w: no %s header", errNoID, c.cfg.IDFrom.Header)
	}
	return id, nil
}
