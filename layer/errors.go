package layer

import "errors"

var (
	// ErrNoCheckout reports that no ancestor of the start directory holds
	// .ai/manifest.yaml; the CLI exits 12 on it.
	ErrNoCheckout = errors.New("layer: no checkout found")

	// ErrInvalidManifest reports a manifest that cannot be read or does not
	// follow the ai-repository/v1 contract; the CLI exits 10 on it.
	ErrInvalidManifest = errors.New("layer: invalid manifest")

	// ErrDegraded reports that a strict [Layer] refused to serve an index
	// carrying error diagnostics; the CLI exits 10 on it.
	ErrDegraded = errors.New("layer: index degraded")

	// ErrPromptTooLarge reports a prompt whose text, its arguments filled
	// in, would be over [MaxPromptBytes].
	ErrPromptTooLarge = errors.New("layer: prompt too large")

	// ErrWatching reports a second concurrent call to [Layer.Watch].
	ErrWatching = errors.New("layer: already watching")
)
