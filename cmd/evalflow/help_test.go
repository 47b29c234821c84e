package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// usageCommand is one command line of the top-level usage text.
type usageCommand struct {
	name  string
	line  string   // the whole usage line, for messages
	flags []string // flags the line names (-format, -check, …), without the dash
	any   bool     // the line says [flags]: the command has flags to list
}

var (
	usageLine = regexp.MustCompile(`^  evalflow (\S+)(.*)$`)
	usageFlag = regexp.MustCompile(`(?:^|[\s\[|])-([a-z][a-z0-9-]*)`)
)

// usageCommands reads the commands from the usage text printed by
// `evalflow help`, so a command added there is covered by the tests below
// without editing them.
func usageCommands(t *testing.T) []usageCommand {
	t.Helper()
	var cmds []usageCommand
	for _, line := range strings.Split(usage, "\n") {
		m := usageLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		c := usageCommand{name: m[1], line: strings.TrimSpace(line), any: strings.Contains(m[2], "[flags]")}
		for _, f := range usageFlag.FindAllStringSubmatch(m[2], -1) {
			c.flags = append(c.flags, f[1])
		}
		cmds = append(cmds, c)
	}
	if len(cmds) == 0 {
		t.Fatal("no command found in the usage text")
	}
	return cmds
}

func TestUsageCommands(t *testing.T) {
	got := map[string]usageCommand{}
	for _, c := range usageCommands(t) {
		if _, dup := got[c.name]; dup {
			t.Errorf("command %q is listed twice in the usage", c.name)
		}
		got[c.name] = c
	}
	// The parser must see the shapes the usage uses: [flags], a named
	// flag, and a command without any.
	if c, ok := got["run"]; !ok || !c.any {
		t.Errorf("run: got %+v, want a command with [flags]", c)
	}
	if c, ok := got["fmt"]; !ok || strings.Join(c.flags, ",") != "check" {
		t.Errorf("fmt: got %+v, want the flag check", c)
	}
	if c, ok := got["version"]; !ok || c.any || len(c.flags) > 0 {
		t.Errorf("version: got %+v, want a command without flags", c)
	}
}

// TestHelpEveryCommand runs `evalflow COMMAND -h` (and -help) for every
// command of the usage text: it must exit 0, print the command's usage, and
// list the flags the usage line names (at least one for a [flags] line).
func TestHelpEveryCommand(t *testing.T) {
	flagLine := regexp.MustCompile(`(?m)^\s+-[a-z]`)
	for _, c := range usageCommands(t) {
		for _, h := range []string{"-h", "-help"} {
			t.Run(c.name+"/"+h, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), []string{c.name, h}, &stdout, &stderr)
				out := stdout.String() + stderr.String()
				if code != exitOK {
					t.Fatalf("evalflow %s %s: exit %d, want 0\n%s", c.name, h, code, out)
				}
				if strings.Contains(out, "unknown command") {
					t.Fatalf("evalflow %s %s: the usage lists %q but the command is unknown:\n%s", c.name, h, c.line, out)
				}
				if !c.any && len(c.flags) == 0 {
					return
				}
				if !strings.Contains(strings.ToLower(out), "usage: evalflow "+c.name) {
					t.Errorf("evalflow %s %s does not print %q:\n%s", c.name, h, "Usage: evalflow "+c.name, out)
				}
				if c.any && !flagLine.MatchString(out) {
					t.Errorf("evalflow %s %s lists no flags, but the usage says [flags]:\n%s", c.name, h, out)
				}
				for _, f := range c.flags {
					if !regexp.MustCompile(`(?:^|[\s\[|])-` + regexp.QuoteMeta(f) + `\b`).MatchString(out) {
						t.Errorf("evalflow %s %s does not mention -%s, which the usage line %q names:\n%s", c.name, h, f, c.line, out)
					}
				}
			})
		}
	}
}

// TestDocsListEveryCommand: the command list at the top of docs/cli.md
// names every command of the usage text, so the reference cannot fall
// behind the CLI.
func TestDocsListEveryCommand(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range usageCommands(t) {
		if !strings.Contains(doc, "\nevalflow "+c.name+" ") {
			t.Errorf("docs/cli.md's command list has no line for evalflow %s", c.name)
		}
	}
}
