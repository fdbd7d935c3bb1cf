package targets

import (
	"fmt"
	"slices"
)

// ClientConfiguration is one configuration a client is tested in (clients[].configurations): SDK
// bugs show at settings other than the default (retries turned off, another maximum), so a target
// may describe the same client under several. Its env is merged over the client's, its retry
// block overrides the client's policy field by field. bounded, retries-transient and key-present
// run once per configuration; the other properties run with the client's own.
type ClientConfiguration struct {
	// Name identifies the configuration in spec names, reports and the label config:NAME; ""
	// is the client's own (no configurations declared).
	Name string
	// Env are the configuration's environment values (templates over ClientVars), merged over
	// the client's (a name both declare takes the configuration's value).
	Env map[string]string
	// Retry is the client's policy with the fields the configuration declares over it.
	Retry RetryPolicy

	env     map[string]*tmpl
	envKeys []string
}

// Configurations returns the configurations a client is tested in: those it declares, or, when
// it declares none, its own (a configuration with no name, its env and policy).
func (c *Client) Configurations() []*ClientConfiguration {
	if len(c.configs) > 0 {
		return c.configs
	}
	return []*ClientConfiguration{c.Own()}
}

// Declared returns the configurations the client declares (nil: none).
func (c *Client) Declared() []*ClientConfiguration { return c.configs }

// Own is the client's own configuration: no name, no environment of its own, its policy.
func (c *Client) Own() *ClientConfiguration { return &ClientConfiguration{Retry: c.Retry} }

// Deviations says, one phrase each, how the client's policy and the policies of its
// configurations differ from the source articles' rules; a configuration's are those its own
// policy does not already show, each prefixed with the configuration ("in configuration
// no-retries: never retries").
func (c *Client) Deviations() []string {
	out := c.Retry.Deviations()
	for _, cfg := range c.configs {
		for _, d := range cfg.Retry.Deviations() {
			if !slices.Contains(c.Retry.Deviations(), d) {
				out = append(out, "in configuration "+cfg.Name+": "+d)
			}
		}
	}
	return out
}

// clientConfigurations decodes a client's configurations (after its env and retry policy).
func (d *decoder) clientConfigurations(o *object, c *Client) {
	nodes, ok := d.list(o, "configurations")
	if !ok {
		return
	}
	if len(nodes) == 0 {
		d.ps.add(o.lineOf("configurations"), o.at("configurations"), "declare at least one configuration ({name, env, retry}), or leave the field out")
		return
	}
	seen := map[string]int{}
	for i, n := range nodes {
		co, ok := d.object(n, fmt.Sprintf("%s[%d]", o.at("configurations"), i), o.sub("configurations")+"[]")
		if !ok {
			continue
		}
		cfg := &ClientConfiguration{Name: d.uniqueName(co, "configuration", seen), Env: map[string]string{}, env: map[string]*tmpl{}}
		for _, h := range d.envMap(co, "env") {
			cfg.Env[h.Name] = h.Value
			cfg.envKeys = append(cfg.envKeys, h.Name)
			if t, ok := d.compile(h.Value, srcPos{line: h.line}, co.at("env")+"."+h.Name, clientVarFields); ok {
				cfg.env[h.Name] = t
			}
		}
		cfg.Retry = d.retryPolicy(co, c.Retry)
		c.configs = append(c.configs, cfg)
	}
}

// Render returns a client's command and environment ("NAME=value": the client's env with the
// configuration's merged over it) for one scenario in configuration cfg (nil: the client's own).
func (c *Client) Render(v ClientVars, cfg *ClientConfiguration) (argv, env []string, err error) {
	for i, t := range c.command {
		s, err := t.render(v)
		if err != nil {
			return nil, nil, fmt.Errorf("clients.%s.command[%d]: %w", c.Name, i, err)
		}
		argv = append(argv, s)
	}
	vals, err := c.RenderEnv(v, cfg)
	if err != nil {
		return nil, nil, err
	}
	for _, k := range c.envOrder(cfg) {
		env = append(env, k+"="+vals[k])
	}
	return argv, env, nil
}

// RenderEnv returns the client's environment values for one scenario in configuration cfg (nil:
// the client's own), the configuration's over the client's, each rendered over v.
func (c *Client) RenderEnv(v ClientVars, cfg *ClientConfiguration) (map[string]string, error) {
	out := map[string]string{}
	for _, k := range c.envKeys {
		s, err := c.env[k].render(v)
		if err != nil {
			return nil, fmt.Errorf("clients.%s.env.%s: %w", c.Name, k, err)
		}
		out[k] = s
	}
	if cfg == nil {
		return out, nil
	}
	for _, k := range cfg.envKeys {
		t := cfg.env[k]
		if t == nil {
			continue
		}
		s, err := t.render(v)
		if err != nil {
			return nil, fmt.Errorf("clients.%s.configurations.%s.env.%s: %w", c.Name, cfg.Name, k, err)
		}
		out[k] = s
	}
	return out, nil
}

// envOrder is the order of a scenario's environment names: the client's, then those only the
// configuration declares.
func (c *Client) envOrder(cfg *ClientConfiguration) []string {
	keys := slices.Clone(c.envKeys)
	if cfg != nil {
		for _, k := range cfg.envKeys {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}
