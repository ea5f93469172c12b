package carry

import "encoding/json"

// SafeToResend records in safe, for each tool of a tools/list result,
// whether running it twice is harmless (its hints say read-only or
// idempotent), and returns the result's next cursor. A bridge and a local
// session both learn it, so that whatever serves the client next knows.
func SafeToResend(safe map[string]bool, result json.RawMessage) (nextCursor string) {
	var r struct {
		Tools []struct {
			Name        string `json:"name"`
			Annotations struct {
				ReadOnly   *bool `json:"readOnlyHint"`
				Idempotent *bool `json:"idempotentHint"`
			} `json:"annotations"`
		} `json:"tools"`
		NextCursor string `json:"nextCursor"`
	}
	_ = json.Unmarshal(result, &r)
	for _, t := range r.Tools {
		a := t.Annotations
		safe[t.Name] = (a.ReadOnly != nil && *a.ReadOnly) || (a.Idempotent != nil && *a.Idempotent)
	}
	return r.NextCursor
}
