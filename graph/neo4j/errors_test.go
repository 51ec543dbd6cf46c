package neo4j

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/procgraph/procgraph/fault"
)

func TestMapError(t *testing.T) {
	s := &Store{}
	secret := "Node(42) already exists with label `Decision` and property `id` = 'pgd_secret'"
	cases := []struct {
		name string
		err  error
		code fault.Code
	}{
		{"constraint", &neo4j.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed", Msg: secret}, fault.CodeConflict},
		{"syntax", &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError", Msg: secret}, fault.CodeInternal},
		{"type", &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.TypeError", Msg: secret}, fault.CodeInternal},
		{"deadlock", &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected", Msg: secret}, fault.CodeUnavailable},
		{"not a leader", &neo4j.Neo4jError{Code: "Neo.ClientError.Cluster.NotALeader", Msg: secret}, fault.CodeUnavailable},
		{"database unavailable", &neo4j.Neo4jError{Code: "Neo.TransientError.General.DatabaseUnavailable", Msg: secret}, fault.CodeUnavailable},
		{"unauthorized", &neo4j.Neo4jError{Code: "Neo.ClientError.Security.Unauthorized", Msg: secret}, fault.CodeUnavailable},
		{"connectivity", &neo4j.ConnectivityError{Inner: errors.New(secret)}, fault.CodeUnavailable},
		{"session expired", &neo4j.ConnectivityError{Inner: io.EOF}, fault.CodeUnavailable},
		{"retries exhausted", &neo4j.TransactionExecutionLimit{Cause: "timeout", Errors: []error{
			&neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected", Msg: secret}}}, fault.CodeUnavailable},
		{"deadline", fmt.Errorf("wrapped: %w", context.DeadlineExceeded), fault.CodeUnavailable},
		{"closed driver", &neo4j.UsageError{Message: "Trying to create session on closed driver"}, fault.CodeUnavailable},
		{"other", errors.New(secret), fault.CodeInternal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.mapError("test", c.err)
			if got := fault.ErrorCode(err); got != c.code {
				t.Fatalf("code = %s, want %s", got, c.code)
			}
			if msg := fault.ErrorMessage(err); strings.Contains(msg, "secret") || strings.Contains(msg, "42") {
				t.Errorf("caller-safe message leaks the backend's: %q", msg)
			}
			if !errors.Is(err, c.err) {
				t.Errorf("the original error is not in the chain of %v", err)
			}
		})
	}
	t.Run("procedures errors pass through", func(t *testing.T) {
		pe := fault.Errorf(fault.CodeNotFound, "no procedure")
		if err := s.mapError("test", pe); err != error(pe) {
			t.Errorf("mapError(%v) = %v", pe, err)
		}
	})
}

func TestOpenUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := Open(ctx, Config{URI: "bolt://127.0.0.1:1", Username: "neo4j", Password: "x"})
	if code := fault.ErrorCode(err); code != fault.CodeUnavailable {
		t.Fatalf("Open on a closed port: %v (code %s), want %s", err, code, fault.CodeUnavailable)
	}
	if msg := fault.ErrorMessage(err); msg != msgUnavailable {
		t.Errorf("message = %q", msg)
	}
	_, err = Open(ctx, Config{})
	if code := fault.ErrorCode(err); code != fault.CodeInvalid {
		t.Errorf("Open without URI: %v, want %s", err, fault.CodeInvalid)
	}
}
