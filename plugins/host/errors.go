package host

// Kind classifies a plugin failure so that callers can react to it (fail a
// sync, answer 422, retry) without parsing messages.
type Kind string

// The kinds of [Error].
const (
	// KindNotInstalled: no executable strata-connector-<type> in the plugin
	// directory.
	KindNotInstalled Kind = "not_installed"
	// KindStart: the plugin could not be started or did not complete the
	// go-plugin handshake (not a connector, crashed at start, too slow).
	KindStart Kind = "start"
	// KindVersion: the plugin speaks another protocol version.
	KindVersion Kind = "version"
	// KindExited: the plugin process died during a call.
	KindExited Kind = "exited"
	// KindHung: a Read received no message for Options.ReadIdleTimeout.
	KindHung Kind = "hung"
	// KindTimeout: a Spec, Check or Discover call took longer than
	// Options.CallTimeout.
	KindTimeout Kind = "timeout"
	// KindMalformed: the plugin sent data that breaks the protocol (a batch
	// that does not decode or does not match the discovered schema, an
	// unreadable schema, a bad spec).
	KindMalformed Kind = "malformed"
	// KindCheckFailed: Check rejected the configuration; Detail is the
	// plugin's explanation for the user.
	KindCheckFailed Kind = "check_failed"
	// KindPlugin: the plugin answered a call with an error; Detail is its
	// message.
	KindPlugin Kind = "plugin"
	// KindClosed: the Client was closed or the Host shut down.
	KindClosed Kind = "closed"
)

// Error is a plugin failure. Its message names the plugin type and is fit to
// show in a sync job's error: it never contains configuration secrets.
type Error struct {
	// Type is the connector type of the plugin.
	Type string
	// Kind classifies the failure.
	Kind Kind
	// Detail is the plugin's own message for KindCheckFailed and KindPlugin
	// (secrets redacted), empty otherwise.
	Detail string
	// Err is the underlying error, if any.
	Err error

	msg string
}

// Error implements error.
func (e *Error) Error() string { return e.msg }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }
