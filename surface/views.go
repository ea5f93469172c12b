package surface

import "github.com/majordomus-mcp/majordomus-mcp/layer"

// The JSON shapes of the layer's answers. They hold nothing but what the
// index says, so equal indexes give equal bytes.

type objectSummary struct {
	URI     string `json:"uri"`
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Version string `json:"version,omitempty"`
	Title   string `json:"title,omitempty"`
}

type objectDetail struct {
	objectSummary
	Description string         `json:"description,omitempty"`
	Status      string         `json:"status,omitempty"`
	Tags        []string       `json:"tags"`
	Path        string         `json:"path"`
	FrontMatter map[string]any `json:"front_matter"`
	Body        string         `json:"body"`
}

type searchHit struct {
	objectSummary
	Score float64 `json:"score"`
}

type repository struct {
	Name         string         `json:"name"`
	RepositoryID string         `json:"repository_id"`
	State        string         `json:"state"`
	Generation   uint64         `json:"generation"`
	Objects      int            `json:"objects"`
	Kinds        map[string]int `json:"kinds"`
	Diagnostics  []diagnostic   `json:"diagnostics"`
}

type diagnostic struct {
	Level   string `json:"level"` // error or warning
	Path    string `json:"path"`
	Message string `json:"message"`
}

func summarize(o layer.Object) objectSummary {
	return objectSummary{URI: o.URI, Kind: o.Kind, ID: o.ID, Version: o.Version, Title: o.Title}
}

func objectView(o layer.Object) objectDetail {
	tags := o.Tags
	if tags == nil {
		tags = []string{}
	}
	front := o.Front
	if front == nil {
		front = map[string]any{}
	}
	return objectDetail{
		objectSummary: summarize(o), Description: o.Description, Status: o.Status, Tags: tags, Path: o.Path,
		FrontMatter: front, Body: o.Body,
	}
}

func repositoryReport(ix *layer.Index) repository {
	diags := make([]diagnostic, 0, len(ix.Diagnostics))
	for _, d := range ix.Diagnostics {
		diags = append(diags, diagnostic{Level: d.Level, Path: d.Path, Message: d.Message})
	}
	return repository{
		Name: ix.Name, RepositoryID: ix.RepositoryID, State: ix.State(), Generation: ix.Generation,
		Objects: len(ix.Objects), Kinds: ix.Kinds(), Diagnostics: diags,
	}
}
