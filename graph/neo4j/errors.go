package neo4j

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/procgraph/procgraph/fault"
	"github.com/rs/zerolog"
)

// The caller-safe messages of the codes this edge maps backend errors to.
const (
	msgUnavailable = "the store can't be reached"
	msgConflict    = "the request conflicts with the current state of the store"
	msgInternal    = "internal error"
)

var errClosed = &backendError{
	public: fault.Errorf(fault.CodeUnavailable, msgUnavailable),
	op:     "call",
	cause:  errors.New("the store is closed"),
}

// backendError is a backend failure mapped to a procedures code. Its public
// error carries only a caller-safe message; the original error stays in the
// chain (errors.As, errors.Is and Error()) for logs.
type backendError struct {
	public *fault.Error
	op     string
	cause  error
}

// Error implements error; it includes the backend's message, for logs.
func (e *backendError) Error() string {
	return fmt.Sprintf("%s (neo4j %s: %v)", e.public.Error(), e.op, e.cause)
}

// Unwrap returns the public error first, so that fault.ErrorCode and
// fault.ErrorMessage find it, then the backend's error.
func (e *backendError) Unwrap() []error { return []error{e.public, e.cause} }

// mapError maps a driver or server error to a procedures code: Unavailable
// when the server cannot be reached (connectivity, expired sessions, no
// leader, retries exhausted, deadlines), Conflict for a constraint
// violation, Internal otherwise. A *fault.Error (returned by a work
// function) passes through unchanged.
func (s *Store) mapError(op string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fault.Error
	if errors.As(err, &pe) {
		return err
	}
	code := classify(err)
	var msg string
	var level zerolog.Level
	switch code {
	case fault.CodeUnavailable:
		msg, level = msgUnavailable, zerolog.WarnLevel
	case fault.CodeConflict:
		msg, level = msgConflict, zerolog.DebugLevel
	default:
		msg, level = msgInternal, zerolog.ErrorLevel
	}
	s.log.WithLevel(level).Err(err).Str("op", op).Str("code", string(code)).Msg("neo4j store error")
	return &backendError{public: fault.Errorf(code, "%s", msg), op: op, cause: err}
}

func classify(err error) fault.Code {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fault.CodeUnavailable
	}
	var limit *neo4j.TransactionExecutionLimit
	if errors.As(err, &limit) {
		// Retries exhausted: the last error says why; transient ones mean
		// the server could not serve us in time.
		if n := len(limit.Errors); n > 0 {
			if c := classify(limit.Errors[n-1]); c != fault.CodeInternal {
				return c
			}
		}
		return fault.CodeUnavailable
	}
	var conn *neo4j.ConnectivityError
	var auth *neo4j.InvalidAuthenticationError
	var netErr net.Error
	if errors.As(err, &conn) || errors.As(err, &auth) || errors.As(err, &netErr) {
		return fault.CodeUnavailable
	}
	var usage *neo4j.UsageError
	if errors.As(err, &usage) && strings.Contains(usage.Message, "closed driver") {
		return fault.CodeUnavailable
	}
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) {
		switch {
		case ne.Code == "Neo.ClientError.Schema.ConstraintValidationFailed":
			return fault.CodeConflict
		case ne.IsRetriable(),
			strings.HasPrefix(ne.Code, "Neo.ClientError.Security."),
			ne.Code == "Neo.ClientError.Database.DatabaseNotFound",
			ne.Code == "Neo.TransientError.General.DatabaseUnavailable":
			return fault.CodeUnavailable
		}
	}
	return fault.CodeInternal
}

// isAuthFailure reports whether err is the server refusing the
// credentials (Neo.ClientError.Security.Unauthorized, or the driver's
// InvalidAuthenticationError).
func isAuthFailure(err error) bool {
	var auth *neo4j.InvalidAuthenticationError
	if errors.As(err, &auth) {
		return true
	}
	var ce *neo4j.ConnectivityError
	if errors.As(err, &ce) && ce.Inner != nil {
		err = ce.Inner // it has no Unwrap
	}
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) {
		return ne.Code == "Neo.ClientError.Security.Unauthorized"
	}
	// The driver combines a failed session's error with its close's into
	// one text (errorutil.CombineErrors), which keeps the server's code.
	return strings.Contains(err.Error(), "Neo.ClientError.Security.Unauthorized")
}

// driverLogger passes the driver's warnings and errors to zerolog.
type driverLogger struct{ log zerolog.Logger }

func (l driverLogger) Error(name, id string, err error) {
	l.log.Debug().Err(err).Str("component", name).Str("id", id).Msg("neo4j driver error")
}

func (l driverLogger) Warnf(name, id, msg string, args ...any) {
	l.log.Warn().Str("component", name).Str("id", id).Msgf(msg, args...)
}

func (l driverLogger) Infof(string, string, string, ...any) {}

func (l driverLogger) Debugf(string, string, string, ...any) {}

// The bounds that keep a call short while the database is down (Open's
// driver configuration; the breaker's are storewrap's).
const (
	// connectTimeout bounds one TCP connect to the server.
	connectTimeout = time.Second
	// acquireTimeout bounds taking a connection from the driver's pool,
	// connecting included.
	acquireTimeout = 2 * time.Second
)

// errDown answers every call while the breaker is open: the database was
// found unreachable and has not answered a probe since.
var errDown = &backendError{
	public: fault.Errorf(fault.CodeUnavailable, msgUnavailable),
	op:     "call",
	cause:  errors.New("the database is down (circuit open); probing it in the background"),
}

// outage reports whether err says the database cannot be reached at all
// (no connection, connection lost, database unavailable), as opposed to a
// busy database (deadlocks, an exhausted pool) or a refused statement. The
// driver keeps the raw errors of its attempts (io.EOF, net errors) in a
// TransactionExecutionLimit; the last one decides.
func outage(err error) bool {
	err = lastError(err)
	var conn *neo4j.ConnectivityError
	var netErr net.Error
	if errors.As(err, &conn) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) {
		switch ne.Code {
		case "Neo.TransientError.General.DatabaseUnavailable",
			"Neo.ClientError.Database.DatabaseNotFound":
			return true
		}
	}
	return false
}

// transient reports whether err is a failure worth retrying on a database
// that answers: a deadlock, a leader switch, a lock timeout.
func transient(err error) bool {
	var ne *neo4j.Neo4jError
	return errors.As(lastError(err), &ne) && ne.IsRetriable()
}

// lastError is the error that ended a driver call: for an exhausted retry,
// the last attempt's.
func lastError(err error) error {
	var limit *neo4j.TransactionExecutionLimit
	if errors.As(err, &limit) && len(limit.Errors) > 0 {
		return limit.Errors[len(limit.Errors)-1]
	}
	return err
}
