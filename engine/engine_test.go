package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

type fake struct{}

func (fake) Execute(context.Context, Query) (*table.Table, error) { return &table.Table{}, nil }

func TestRegistry(t *testing.T) {
	r := &Registry{}
	if got := r.Names(); len(got) != 0 {
		t.Fatalf("empty registry has %v", got)
	}
	var seen Config
	r.Register("b", func(_ context.Context, cfg Config) (Executor, error) { seen = cfg; return fake{}, nil })
	r.Register("a", func(context.Context, Config) (Executor, error) { return nil, errors.New("boom") })
	if diff := cmp.Diff([]string{"a", "b"}, r.Names()); diff != "" {
		t.Errorf("Names (-want +got)\n%s", diff)
	}
	if _, err := r.New(context.Background(), "b", Config{MaxRows: 3}); err != nil || seen.MaxRows != 3 {
		t.Errorf("New(b) = %v, cfg %+v", err, seen)
	}
	if _, err := r.New(context.Background(), "a", Config{}); err == nil || err.Error() != "boom" {
		t.Errorf("New(a) = %v", err)
	}
	_, err := r.New(context.Background(), "c", Config{})
	if err == nil || !strings.Contains(err.Error(), `unknown engine kind "c" (known: a, b)`) {
		t.Errorf("New(c) = %v", err)
	}
	for name, fn := range map[string]func(){
		"duplicate": func() { r.Register("a", func(context.Context, Config) (Executor, error) { return fake{}, nil }) },
		"empty":     func() { r.Register("", func(context.Context, Config) (Executor, error) { return fake{}, nil }) },
		"nil":       func() { r.Register("z", nil) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			fn()
		})
	}
}

func TestClassOf(t *testing.T) {
	syntax := &Error{Class: item.ClassSyntax, Msg: `near "SELEC": syntax error`}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, item.ClassNone},
		{syntax, item.ClassSyntax},
		{fmt.Errorf("item q1: %w", syntax), item.ClassSyntax},
		{context.DeadlineExceeded, item.ClassTimeout},
		{fmt.Errorf("x: %w", context.Canceled), item.ClassCancelled},
		{errors.New("other"), item.ClassExecution},
	} {
		if got := ClassOf(tc.err); got != tc.want {
			t.Errorf("ClassOf(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestError(t *testing.T) {
	inner := errors.New("inner")
	for _, tc := range []struct {
		e    *Error
		want string
	}{
		{&Error{Class: item.ClassSchema, Msg: "no such table: t", Err: inner}, "no such table: t"},
		{&Error{Class: item.ClassSchema, Err: inner}, "inner"},
		{&Error{Class: item.ClassTimeout}, "timeout error"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	if !errors.Is(&Error{Err: inner}, inner) {
		t.Error("Unwrap does not reach the cause")
	}
}

func TestSchemaTable(t *testing.T) {
	s := &Schema{Tables: []TableInfo{{Name: "Orders"}}}
	if tb, ok := s.Table("orders"); !ok || tb.Name != "Orders" {
		t.Errorf("Table(orders) = %v, %v", tb, ok)
	}
	if _, ok := s.Table("order"); ok {
		t.Error("Table(order) found")
	}
	if _, ok := (*Schema)(nil).Table("x"); ok {
		t.Error("nil schema has a table")
	}
}
