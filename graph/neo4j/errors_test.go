package neo4jstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/procedures"
)

func TestMapError(t *testing.T) {
	s := &Store{}
	secret := "Node(42) already exists with label `Decision` and property `id` = 'pgd_secret'"
	cases := []struct {
		name string
		err  error
		code procedures.Code
	}{
		{"constraint", &neo4j.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed", Msg: secret}, procedures.CodeConflict},
		{"syntax", &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError", Msg: secret}, procedures.CodeInternal},
		{"type", &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.TypeError", Msg: secret}, procedures.CodeInternal},
		{"deadlock", &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected", Msg: secret}, procedures.CodeUnavailable},
		{"not a leader", &neo4j.Neo4jError{Code: "Neo.ClientError.Cluster.NotALeader", Msg: secret}, procedures.CodeUnavailable},
		{"database unavailable", &neo4j.Neo4jError{Code: "Neo.TransientError.General.DatabaseUnavailable", Msg: secret}, procedures.CodeUnavailable},
		{"unauthorized", &neo4j.Neo4jError{Code: "Neo.ClientError.Security.Unauthorized", Msg: secret}, procedures.CodeUnavailable},
		{"connectivity", &neo4j.ConnectivityError{Inner: errors.New(secret)}, procedures.CodeUnavailable},
		{"session expired", &neo4j.ConnectivityError{Inner: io.EOF}, procedures.CodeUnavailable},
		{"retries exhausted", &neo4j.TransactionExecutionLimit{Cause: "timeout", Errors: []error{
			&neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected", Msg: secret}}}, procedures.CodeUnavailable},
		{"deadline", fmt.Errorf("wrapped: %w", context.DeadlineExceeded), procedures.CodeUnavailable},
		{"closed driver", &neo4j.UsageError{Message: "Trying to create session on closed driver"}, procedures.CodeUnavailable},
		{"other", errors.New(secret), procedures.CodeInternal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.mapError("test", c.err)
			if got := procedures.ErrorCode(err); got != c.code {
				t.Fatalf("code = %s, want %s", got, c.code)
			}
			if msg := procedures.ErrorMessage(err); strings.Contains(msg, "secret") || strings.Contains(msg, "42") {
				t.Errorf("caller-safe message leaks the backend's: %q", msg)
			}
			if !errors.Is(err, c.err) {
				t.Errorf("the original error is not in the chain of %v", err)
			}
		})
	}
	t.Run("procedures errors pass through", func(t *testing.T) {
		pe := procedures.Errorf(procedures.CodeNotFound, "no procedure")
		if err := s.mapError("test", pe); err != error(pe) {
			t.Errorf("mapError(%v) = %v", pe, err)
		}
	})
}

func TestOpenUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := Open(ctx, Config{URI: "bolt://127.0.0.1:1", Username: "neo4j", Password: "x"})
	if code := procedures.ErrorCode(err); code != procedures.CodeUnavailable {
		t.Fatalf("Open on a closed port: %v (code %s), want %s", err, code, procedures.CodeUnavailable)
	}
	if msg := procedures.ErrorMessage(err); msg != msgUnavailable {
		t.Errorf("message = %q", msg)
	}
	_, err = Open(ctx, Config{})
	if code := procedures.ErrorCode(err); code != procedures.CodeInvalid {
		t.Errorf("Open without URI: %v, want %s", err, procedures.CodeInvalid)
	}
}
