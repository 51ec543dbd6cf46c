package fields

// The bounds of the request fields, in bytes of UTF-8 for strings; the
// domain checks its inputs against these, it declares none of its own.
const (
	// MaxKeyBytes bounds a key or a name: a session id, an
	// Idempotency-Key, a cause's name, a procedure's name, an actor.
	MaxKeyBytes = 512
	// MaxReasonBytes bounds an operator's reason and a turn's summary.
	MaxReasonBytes = 2 << 10
	// MaxSummaryBytes bounds a captured procedure's summary.
	MaxSummaryBytes = 4 << 10
	// MaxCauseDescBytes bounds a cause's description.
	MaxCauseDescBytes = 4 << 10
	// MaxToolNameBytes bounds a catalogue tool's name.
	MaxToolNameBytes = 128
	// MaxServerKeyBytes bounds an upstream server's key (a tool's server).
	MaxServerKeyBytes = 64
	// MaxUpstreamNameBytes bounds a tool's name on its server.
	MaxUpstreamNameBytes = 512
	// MaxToolDescBytes bounds a catalogue tool's description.
	MaxToolDescBytes = 8 << 10
	// MaxCatalogueTools is the largest catalogue accepted.
	MaxCatalogueTools = 10000
	// MaxSearchBytes is the longest relevance search (q, query).
	MaxSearchBytes = 512
	// MaxFilterValues bounds how many causes or tools one find names.
	MaxFilterValues = 50
	// DefaultFindLimit and MaxFindLimit are a find's page size.
	DefaultFindLimit = 25
	MaxFindLimit     = 500
	// MaxOffset bounds a find's page start.
	MaxOffset = 1 << 30
	// MaxMinTools bounds a find's min_tools.
	MaxMinTools = 1000
	// MaxWaitSeconds bounds wait_s, a turn's wait for the operator.
	MaxWaitSeconds = 60
	// MaxTurnIDBytes bounds a turn id (trn_…).
	MaxTurnIDBytes = 64
	// MaxDriftPage is the largest page of stale versions (GET /v1/drift).
	MaxDriftPage = 500
	// MaxNoteBytes bounds an audit record's note: an operator's reason,
	// or "reviewed by " and the reviewer.
	MaxNoteBytes = MaxReasonBytes + MaxKeyBytes
	// MaxSuggestionBytes bounds an audit record's suggestion.
	MaxSuggestionBytes = 1 << 10
	// DefaultDecisionLimit and MaxDecisionLimit are the audit log's page
	// size (GET /v1/decisions).
	DefaultDecisionLimit = 100
	MaxDecisionLimit     = 1000
	// MaxTokenLifetime bounds a token's expiry: ten years, in seconds.
	MaxTokenLifetime = 10 * 366 * 24 * 3600
	// MaxBodyBytes is the largest request body (api.DefaultMaxBody): an
	// object field (metadata, arguments, a schema) is at most this much
	// JSON, and so is a text taken from one (a search part).
	MaxBodyBytes = 1 << 20
	// MaxNames bounds a list of names a block yields: a signature, its
	// state-changing or unknown tools, its parameters or warnings, the
	// tools a decision allowed, a binding's tools (the largest block, 64
	// KiB, names fewer).
	MaxNames = 8 << 10
	// MaxSearchParts bounds the distinct texts a procedure's search
	// document keeps (search.MaxParts).
	MaxSearchParts = 64
	// MaxReviewCodeBytes bounds the code of one procedure an approval's
	// review shows (procedures.Reach): longer code is shown truncated,
	// with its hash and length, and the full text is its version's.
	MaxReviewCodeBytes = 16 << 10
	// MaxReviewNestedBytes bounds the nested code of one review, all the
	// procedures it reaches together.
	MaxReviewNestedBytes = 64 << 10
	// MaxReviewReadBytes bounds the answer of one read a review at the
	// call shows (gate.Read): a longer one is shown cut, marked truncated
	// with its whole length. The reads of one pause are bounded together
	// as a recording is (recording.MaxRecordingBytes).
	MaxReviewReadBytes = 4 << 10
)

// The request fields. A body or a tool input composes them (Body, Opt,
// Req, Nullable); a field used with other words keeps its bounds
// (Described) or only adds a lower one (NonEmpty).
var (
	// SessionID is the agent session a request belongs to: its usage key
	// and the key of its policies, a key the stores build others from (a
	// NUL would let one session's id be a prefix of another's keys) and a
	// path segment. One rule wherever one enters (usage.CheckSessionID):
	// capture, invoke, turns, MCP, the session routes.
	SessionID = Field{Name: "session_id", Type: String, MaxBytes: MaxKeyBytes, NoControl: true,
		Doc: "the agent's session"}
	// IdempotencyKey is the Idempotency-Key header: the usage key when a
	// request has no session id, a key the stores build others from as
	// they do from a session id, under the same rule (no control
	// characters: Go's server passes a tab and C1 controls in a header).
	IdempotencyKey = Field{Name: "Idempotency-Key", Type: String, MaxBytes: MaxKeyBytes, NoControl: true}
	// Code is a block of code; its bound is signature.MaxCodeBytes, which
	// the domain answers as payload_too_large (not in the schema).
	Code    = Field{Name: "code", Type: String, MinBytes: 1, Doc: "the block to run (Starlark; tools.NAME(...) calls tools)"}
	Dialect = Field{Name: "dialect", Type: String, Enum: []string{"starlark", "python-async"}}
	Phase   = Field{Name: "phase", Type: String, Enum: []string{"automatic", "interactive"}}
	Status  = Field{Name: "status", Type: String, Enum: []string{"succeeded", "failed"}, Doc: "current version's status"}
	// Arguments are a block's free variables, checked against its typed
	// schema by the domain.
	Arguments = Field{Name: "arguments", Type: Object, Doc: "the block's free variables"}
	Metadata  = Field{Name: "metadata", Type: Object}
	// Lift is whether a capture lifts literal tool arguments into
	// parameters (default true; docs/design.md "Lifting literals into
	// parameters").
	Lift = Field{Name: "lift", Type: Boolean, Doc: "lift literal tool arguments into parameters (default true)"}
	// Summary is a captured procedure's summary.
	Summary = Field{Name: "summary", Type: String, MaxBytes: MaxSummaryBytes}
	// TurnSummary is what a turn's block does, for the operator.
	TurnSummary = Field{Name: "summary", Type: String, MaxBytes: MaxReasonBytes, Doc: "what the block does, for the operator"}
	// CauseName names a cause (a capture's, an invoke's, a find filter).
	CauseName = Field{Name: "name", Type: String, MinBytes: 1, MaxBytes: MaxKeyBytes}
	CauseDesc = Field{Name: "description", Type: String, MaxBytes: MaxCauseDescBytes}
	// Cause is a capture's cause.
	Cause = Field{Name: "cause", Type: Object, Props: []Prop{Req(CauseName), Nullable(CauseDesc)}}
	// InvokeCause is the cause an invoke links on success.
	InvokeCause = Field{Name: "cause", Type: String, MaxBytes: MaxKeyBytes}
	// ReviewedBy names the operator who reviewed a run: an actor's name.
	ReviewedBy = Field{Name: "reviewed_by", Type: String, MaxBytes: MaxKeyBytes}
	// TokenHolder, TokenScopes and TokenExpiresIn are a bearer token's
	// holder (the tokens file's pattern is checked by tokens.Check), scopes
	// and lifetime in seconds (at most MaxTokenLifetime).
	TokenHolder    = Field{Name: "holder", Type: String, MinBytes: 1, MaxBytes: 64, NoControl: true, Doc: "the token's holder: 1-64 of [A-Za-z0-9_.@-]"}
	TokenScope     = Field{Type: String, Enum: []string{"read", "capture", "invoke", "grant", "admin"}}
	TokenScopes    = Field{Name: "scopes", Type: Array, Items: &TokenScope, MaxItems: 5}
	TokenExpiresIn = Field{Name: "expires_in_s", Type: Integer, Min: Int(1), Max: Int(MaxTokenLifetime), Doc: "the token expires this many seconds from now (default: never)"}

	// Reason is an operator's reason, for the audit log.
	Reason = Field{Name: "reason", Type: String, MaxBytes: MaxReasonBytes, Doc: "why, for the audit log"}
	// ProcName names a procedure (proc__…).
	ProcName = Field{Name: "name", Type: String, MinBytes: 1, MaxBytes: MaxKeyBytes, Doc: "the procedure (proc__…)"}
	Enabled  = Field{Name: "enabled", Type: Boolean}
	// VersionHash names a version by its code hash (a verification's).
	VersionHash = Field{Name: "version", Type: String, MinBytes: 1, MaxBytes: MaxKeyBytes, Doc: "the version's code hash (default: the current one)"}
	// WaitS is how long a request waits while a turn is pending.
	WaitS = Field{Name: "wait_s", Type: Integer, Min: Int(0), Max: Int(MaxWaitSeconds)}
	// TurnID names a turn.
	TurnID = Field{Name: "id", Type: String, MinBytes: 1, MaxBytes: MaxTurnIDBytes, Doc: "the pending turn's id (trn_…)"}
	Choice = Field{Name: "choice", Type: String, Enum: []string{"run_once", "auto_run", "always_ask", "reject", "run_all"},
		Doc: "run_all answers a turn paused at a call only"}
	// Review is how a turn is reviewed if it needs an operator.
	Review = Field{Name: "review", Type: String, Enum: []string{"block", "at_call"},
		Doc: "block: the whole block before it runs; at_call: each state-changing call as the run reaches it (default: the server's)"}
	// CallRef names the call an answer to a turn paused at a call is
	// given at (gate.CallRef).
	CallRef = Field{Name: "call", Type: Object, Doc: "the call answered (a turn paused at a call): refused unless the turn is paused at it",
		Props: []Prop{Req(Field{Name: "position", Type: Integer, Min: Int(0), Max: Int(1 << 20)}),
			Req(Field{Name: "args_digest", Type: String, MinBytes: 1, MaxBytes: 128})}}

	// ToolName, ToolDesc and Tool are a catalogue tool.
	ToolName = Field{Name: "name", Type: String, MinBytes: 1, MaxBytes: MaxToolNameBytes}
	ToolDesc = Field{Name: "description", Type: String, MaxBytes: MaxToolDescBytes}
	Tool     = Field{Type: Object, Props: []Prop{Req(ToolName), Opt(ToolDesc),
		Opt(Field{Name: "read_only", Type: Boolean}), Opt(Field{Name: "external_access", Type: Boolean}),
		Nullable(Field{Name: "input_schema", Type: Object}), Nullable(Field{Name: "output_schema", Type: Object}),
		Opt(Field{Name: "server", Type: String, MaxBytes: MaxServerKeyBytes, Doc: "the upstream server's key (the upstreams file); absent for the unnamed server of the --upstream-* flags"}),
		Opt(Field{Name: "upstream_name", Type: String, MinBytes: 1, MaxBytes: MaxUpstreamNameBytes, Doc: "the tool's name on its server, sent on the wire (default: name)"}),
		Opt(Field{Name: "listed", Type: String, MaxBytes: 80, Doc: "the hash of the entry as its server listed it (tools import, a refresh): while the entry is exactly that, a catalogue refresh follows the server; an edited entry is the operator's, kept"}),
		Opt(Field{Name: "schema_hash", Type: String, MaxBytes: 80, Doc: "computed by the server; ignored"})}}

	// The find filters (GET /v1/procedures, find_all_procedures).
	Search = Field{Name: "q", Type: String, MinBytes: 1, MaxBytes: MaxSearchBytes}
	Limit  = Field{Name: "limit", Type: Integer, Min: Int(1), Max: Int(MaxFindLimit)}
	Offset = Field{Name: "offset", Type: Integer, Min: Int(0), Max: Int(MaxOffset), Doc: "page start"}
	// DecisionLimit is the audit log's page size.
	DecisionLimit = Field{Name: "limit", Type: Integer, Min: Int(1), Max: Int(MaxDecisionLimit)}
	MinTools      = Field{Name: "min_tools", Type: Integer, Min: Int(0), Max: Int(MaxMinTools), Doc: "at least this many distinct tools"}
	// FilterValue is one cause or tool a find names.
	FilterValue = Field{Type: String, MinBytes: 1, MaxBytes: MaxKeyBytes}

	// The fields a store keeps and a dump carries that no request takes
	// as such (they are derived, or named by the caller's token): a dump's
	// records are checked against the request fields and these
	// (dump/bounds.go, docs/dumps.md "Bounds").

	// Actor names who did something: granted, retired, resolved, set a
	// policy, requested a turn (a token's name, an operator).
	Actor = Field{Name: "actor", Type: String, MaxBytes: MaxKeyBytes}
	// CodeHash names a version, a block or a contract by its hash.
	CodeHash = Field{Name: "code_hash", Type: String, MaxBytes: MaxKeyBytes}
	// Name is one name a block yields: a tool, a procedure, a parameter.
	Name = Field{Type: String, MinBytes: 1, MaxBytes: MaxKeyBytes}
	// Names is a list of them.
	Names = Field{Type: Array, Items: &Name, MaxItems: MaxNames}
	// UsageKey is a key counted once (usage.UsageKey: "s:" and a
	// session id, "i:" and an Idempotency-Key, or "r:" and 32 hex).
	UsageKey = Field{Name: "key", Type: String, MinBytes: 1, MaxBytes: len("s:") + MaxKeyBytes}
	// SearchPart is one text of a procedure's search document
	// (procedures.SearchParts: a tool name, a summary, a cause, a trigger
	// signal of a capture's metadata).
	SearchPart  = Field{Type: String, MaxBytes: MaxBodyBytes}
	SearchParts = Field{Name: "search_parts", Type: Array, Items: &SearchPart, MaxItems: MaxSearchParts}
	// WarningMessage is the text of an analysis warning.
	WarningMessage = Field{Name: "message", Type: String, MaxBytes: MaxReasonBytes}
	// Label is a short text a dump's header carries: the source store, the
	// procgraph version that wrote it.
	Label = Field{Type: String, MaxBytes: MaxKeyBytes}
)
