package config

import (
	"strings"
	"testing"
)

func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLoadDefaultsAndOverrides(t *testing.T) {
	c, err := Load(env("HOME", "/home/x"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != DefaultAddr || c.LogLevel != "info" || c.InstanceName != "LLeMbas" || c.DataDir == "" {
		t.Errorf("defaults: %+v", c)
	}
	if strings.HasSuffix(DefaultAddr, ":8080") {
		t.Error("default port collides with llama.cpp's")
	}
	c, err = Load(env("LEMBAS_DATA_DIR", "rel/dir", "LEMBAS_ALLOWED_HOSTS", " nas:8484, lembas.home.arpa ,", "LEMBAS_NO_KEYCHAIN", "true"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.DataDir, "/") || !c.NoKeychain || strings.Join(c.AllowedHosts, "|") != "nas:8484|lembas.home.arpa" {
		t.Errorf("overrides: %+v", c)
	}
}

func TestValidateNamesTheVariable(t *testing.T) {
	for _, tt := range []struct{ k, v, want string }{
		{"LEMBAS_ADDR", "8484", "LEMBAS_ADDR"},
		{"LEMBAS_ADDR", "host:99999", "port must be"},
		{"LEMBAS_LOG_LEVEL", "chatty", "LEMBAS_LOG_LEVEL"},
		{"LEMBAS_ALLOWED_HOSTS", "https://nas", "not a URL"},
		{"LEMBAS_SECRET_KEY", "not-a-key", "lembas secret-key"},
	} {
		c, err := Load(env(tt.k, tt.v, "LEMBAS_DATA_DIR", "/tmp/x"))
		if err == nil {
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s=%q: %v, want mention of %q", tt.k, tt.v, err, tt.want)
		}
	}
	if _, err := Load(env("LEMBAS_SELFTEST", "yes please")); err == nil || !strings.Contains(err.Error(), "LEMBAS_SELFTEST") {
		t.Errorf("bad bool: %v", err)
	}
}

func TestRedactedNeverShowsTheKey(t *testing.T) {
	c := Config{SecretKey: "super-secret", DataDir: "/d", Addr: DefaultAddr, LogLevel: "info"}
	for _, kv := range c.Redacted() {
		if strings.Contains(kv[1], "super-secret") {
			t.Fatalf("%s shows the key", kv[0])
		}
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:1": true, "localhost:1": true, "[::1]:1": true, ":8484": false, "0.0.0.0:1": false, "192.168.1.2:1": false} {
		a, err := SplitAddr(addr)
		if err != nil || a.Loopback() != want {
			t.Errorf("%s: loopback=%v err=%v", addr, a.Loopback(), err)
		}
	}
}

func TestTrustedProxies(t *testing.T) {
	c, err := Load(env("LEMBAS_TRUSTED_PROXIES", "127.0.0.1, 10.0.0.0/8 ,::1,fd00::/8"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.TrustedProxies {
		got = append(got, p.String())
	}
	if want := "127.0.0.1/32|10.0.0.0/8|::1/128|fd00::/8"; strings.Join(got, "|") != want {
		t.Errorf("proxies = %v, want %s", got, want)
	}
	if _, err := Load(env("LEMBAS_TRUSTED_PROXIES", "proxy.lan")); err == nil || !strings.Contains(err.Error(), "LEMBAS_TRUSTED_PROXIES") {
		t.Errorf("a host name is not an address: err = %v", err)
	}
}
