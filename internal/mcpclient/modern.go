package mcpclient

import (
	"encoding/json"
	"maps"
)

// Bytes is the answer as a comparison of answers compares it: the result,
// or the error as JSON.
func (r Response) Bytes() string {
	if r.Error != nil {
		e, _ := json.Marshal(r.Error)
		return string(e)
	}
	return string(r.Result)
}

// ModernMeta is the _meta with which a client of protocol revision
// 2026-07-28, named client, says on every request who it is: its revision,
// capabilities (none) and identity.
func ModernMeta(client string) map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": client, "version": "1.2.3"},
	}
}

// WithMeta is params with meta as their _meta.
func WithMeta(params, meta map[string]any) map[string]any {
	out := map[string]any{"_meta": meta}
	maps.Copy(out, params)
	return out
}
