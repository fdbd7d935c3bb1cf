package openapi

// Starter is a commented target file to start from when there is no OpenAPI document: it
// validates as it is (every value it needs has a default) and names every field a person is
// likely to change.
const Starter = `# retrysafe target file: describes one idempotent HTTP API under test.
# Keys are snake_case; unknown fields and unknown placeholders are errors. Any value may use
# ${NAME} or ${NAME:-default} from the environment, so secrets stay out of this file. Template
# values know {{.Ref}} (unique per operation and run), {{.Key}} (the idempotency key) and
# {{.Tenant}}; quote a value that starts with {{ or ${.
# Check it with: retrysafe validate FILE. Infer the profile with: retrysafe probe --target FILE.
name: my-api

# Base URLs of the instances of one service (several: comma-separated in one variable, or a list).
instances:
  - "${TARGET_URL:-http://127.0.0.1:8080}"

operations:
  # One entry per idempotent operation.
  - name: create-order
    method: POST
    path: /v1/orders
    # The request body; {{.Ref}} makes each logical operation's records findable.
    body: '{"ref": "{{.Ref}}", "amount": 1000, "currency": "eur"}'
    # The same ref with other content: the same key with this body must be refused as a mismatch.
    variant_body: '{"ref": "{{.Ref}}", "amount": 2000, "currency": "eur"}'
    key:
      in: header                 # header (default), query or body
      name: Idempotency-Key
      # format: uuid             # the keys the harness makes: uuid, ulid, or a template such as
      #                          # "order-{{.Run}}-{{.Seq}}" (default RUN-SEQ)
    # Body fields the API leaves out of its fingerprint on purpose (the mismatch check changes
    # every other field of the body, one at a time):
    # fingerprint_ignore: [$.note]
    # Counts the business records of one {{.Ref}}: the verdicts rest on this number.
    # Without an observer the checks can only compare responses.
    observer:
      http:
        path: /v1/orders
        query: "ref={{.Ref}}"
        jsonpath: $.count        # RFC 9535: a number, or an array whose length is the count
      # per_tenant: false        # when it counts a ref across all tenants
      # or: sql: {driver: postgres, dsn: "${ORDERS_DSN}", query: "SELECT count(*) FROM orders WHERE ref = '{{.Ref}}'"}

# How callers are told apart: bearer (default), header (an API key header), or none (no
# credentials at all: tenants are named by identity headers only).
# auth: bearer
# Two callers enable the tenancy checks. Credentials are secrets: redacted from every report;
# identity headers (e.g. {X-Tenant: alice}) only say who calls and stay readable.
tenants:
  - name: alice
    # identity: {X-Tenant: alice}
    credentials:
      Authorization: "Bearer ${ALICE_TOKEN:-changeme}"
  - name: bob
    credentials:
      Authorization: "Bearer ${BOB_TOKEN:-changeme}"
# What an unknown caller sends (default: each credential with its value replaced):
# unknown_credentials: {Authorization: "Bearer not-a-real-token"}

# What the API promises: ietf (the IETF draft) or stripe, with overrides.
# Every status takes a code, a list ([400, 409, 422]) or a class (4xx).
profile:
  base: ietf
  mismatch_status: 422           # same key, different payload (stripe: 400)
  in_flight: 409                 # retry while in flight: a status, wait-replay or either
  missing_key_status: 400        # a status, or processed (no idempotency without a key)
  # empty_key_status: 400        # a status, or processed
  max_key_length: 255            # or none
  key_forms: [quoted, bare]      # "abc" (RFC 8941) and abc
  replay_header: ""              # e.g. "Idempotent-Replayed: true"; "" = none required
  error_policy: replay           # replay (a 5xx is stored) or retry

# Declared key retention and in-progress lock timeout, when the API publishes them.
# retention: 24h
# lock_timeout: 30s

# Test hooks of a test deployment, for the error and in-flight checks when the API calls no
# downstream the harness could fail or hold:
# hooks:
#   fail_next: {method: POST, path: /_test/fail}   # makes the next attempt fail
#   slow: {headers: {X-Test-Delay: "{{.Ms}}"}}      # makes one attempt take {{.Ms}} ms

# Event consumers under test (webhooks, queues): see docs/consumers.md; every field: docs/target-file.md.
# consumers:
#   - name: webhooks
#     path: /webhooks
#     event: {body: '{"id": "{{.EventID}}", "object": "{{.Object}}", "version": {{.Version}}}'}
#     signing: {scheme: standard-webhooks, secret: "${WEBHOOK_SECRET}"}
#     effects: {http: {path: /v1/effects, query: "event={{.EventID}}", jsonpath: $.count}}
`
