package junit_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/evalflow/evalflow/junit"
)

// The document as read back, for checking what Write produced.
type xSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    string   `xml:"tests,attr"`
	Failures string   `xml:"failures,attr"`
	Errors   string   `xml:"errors,attr"`
	Skipped  string   `xml:"skipped,attr"`
	Time     string   `xml:"time,attr"`
	Suites   []xSuite `xml:"testsuite"`
}

type xSuite struct {
	Name       string  `xml:"name,attr"`
	Tests      string  `xml:"tests,attr"`
	Failures   string  `xml:"failures,attr"`
	Errors     string  `xml:"errors,attr"`
	Skipped    string  `xml:"skipped,attr"`
	Time       string  `xml:"time,attr"`
	Timestamp  *string `xml:"timestamp,attr"`
	Hostname   *string `xml:"hostname,attr"`
	Properties *struct {
		Property []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"property"`
	} `xml:"properties"`
	Cases []xCase `xml:"testcase"`
}

type xCase struct {
	Name      string    `xml:"name,attr"`
	ClassName string    `xml:"classname,attr"`
	Time      string    `xml:"time,attr"`
	Failure   *xOutcome `xml:"failure"`
	Error     *xOutcome `xml:"error"`
	SystemOut *string   `xml:"system-out"`
}

type xOutcome struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func write(t *testing.T, suites []junit.Suite) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := junit.Write(&buf, suites); err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(buf.Bytes()) {
		t.Fatalf("output is not valid UTF-8:\n%q", buf.Bytes())
	}
	return buf.Bytes()
}

func parse(t *testing.T, doc []byte) xSuites {
	t.Helper()
	var got xSuites
	if err := xml.Unmarshal(doc, &got); err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, doc)
	}
	return got
}

// xmllint returns the path of xmllint. Without it the test fails when CI is
// "true" and is skipped otherwise.
func xmllint(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("xmllint not found (Debian package libxml2-utils; required when CI=true): %v", err)
		}
		t.Skipf("xmllint not found (Debian package libxml2-utils): %v", err)
	}
	return p
}

// lint validates doc against testdata/junit.xsd and returns whether it is
// valid and what xmllint said.
func lint(t *testing.T, doc []byte) (bool, string) {
	t.Helper()
	bin := xmllint(t)
	file := filepath.Join(t.TempDir(), "report.xml")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), file).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, string(out)
	case errors.As(err, &exit):
		return false, string(out)
	default:
		t.Fatalf("running xmllint: %v\n%s", err, out)
		return false, ""
	}
}

// mustValidate validates doc in a subtest "xsd", so that without xmllint
// only the subtest is skipped and the checks of the caller still count.
func mustValidate(t *testing.T, doc []byte) {
	t.Helper()
	t.Run("xsd", func(t *testing.T) {
		if ok, out := lint(t, doc); !ok {
			t.Fatalf("output does not validate against testdata/junit.xsd:\n%s\n%s", out, doc)
		}
	})
}

var ts = time.Date(2025, 3, 14, 15, 9, 26, 0, time.FixedZone("CET", 3600))

func mixed() []junit.Suite {
	return []junit.Suite{{
		Name:      "spider-dev",
		Timestamp: ts,
		Hostname:  "ci-runner-7",
		Time:      12.5,
		Properties: [][2]string{
			{"metric.exec_match", "0.667"},
			{"metric.exact_match", "0.333"},
		},
		Cases: []junit.Case{
			{Name: "q1", ClassName: "evalflow.text2sql", Time: 0.25, SystemOut: "SELECT 1"},
			{Name: "q2", ClassName: "evalflow.text2sql", Time: 1.5, Failure: "exec_match = 0\nwant 3 rows, got 2", SystemOut: "SELECT a\nFROM t"},
			{Name: "q3", ClassName: "evalflow.text2sql", Time: 0.001, Error: "llm: context deadline exceeded", ErrorType: "timeout"},
			{Name: "q4", ClassName: "evalflow.text2sql", Error: "engine crashed"},
			{Name: "q5", ClassName: "evalflow.text2sql", Failure: "wrong", Error: "harness failed", ErrorType: "engine"},
		},
	}, {
		Name:  "spider-dev/model=b",
		Cases: []junit.Case{{Name: "q1", ClassName: "evalflow.text2sql[model=b]", Time: 2}},
	}}
}

func TestCounts(t *testing.T) {
	got := parse(t, write(t, mixed()))
	if got.Tests != "6" || got.Failures != "1" || got.Errors != "3" || got.Skipped != "0" || got.Time != "14.500" {
		t.Errorf("testsuites tests/failures/errors/skipped/time = %s/%s/%s/%s/%s, want 6/1/3/0/14.500",
			got.Tests, got.Failures, got.Errors, got.Skipped, got.Time)
	}
	if len(got.Suites) != 2 {
		t.Fatalf("got %d suites, want 2", len(got.Suites))
	}
	s := got.Suites[0]
	if s.Name != "spider-dev" || s.Tests != "5" || s.Failures != "1" || s.Errors != "3" || s.Skipped != "0" || s.Time != "12.500" {
		t.Errorf("suite 0 name/tests/failures/errors/skipped/time = %s/%s/%s/%s/%s/%s, want spider-dev/5/1/3/0/12.500",
			s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, s.Time)
	}
	if s.Timestamp == nil || *s.Timestamp != "2025-03-14T14:09:26" {
		t.Errorf("timestamp = %v, want 2025-03-14T14:09:26 (UTC)", s.Timestamp)
	}
	if s.Hostname == nil || *s.Hostname != "ci-runner-7" {
		t.Errorf("hostname = %v, want ci-runner-7", s.Hostname)
	}
	if s.Properties == nil || len(s.Properties.Property) != 2 ||
		s.Properties.Property[0].Name != "metric.exec_match" || s.Properties.Property[0].Value != "0.667" ||
		s.Properties.Property[1].Name != "metric.exact_match" || s.Properties.Property[1].Value != "0.333" {
		t.Errorf("properties = %+v, want metric.exec_match=0.667, metric.exact_match=0.333 in order", s.Properties)
	}
	c := s.Cases
	if c[0].Failure != nil || c[0].Error != nil || c[0].SystemOut == nil || *c[0].SystemOut != "SELECT 1" || c[0].Time != "0.250" {
		t.Errorf("passing case = %+v", c[0])
	}
	if c[1].Failure == nil || c[1].Failure.Type != "wrong" || c[1].Failure.Message != "exec_match = 0\nwant 3 rows, got 2" ||
		c[1].Failure.Text != "exec_match = 0\nwant 3 rows, got 2" || c[1].Error != nil || *c[1].SystemOut != "SELECT a\nFROM t" {
		t.Errorf("failing case = %+v, failure %+v", c[1], c[1].Failure)
	}
	if c[2].Error == nil || c[2].Error.Type != "timeout" || c[2].Error.Message != "llm: context deadline exceeded" || c[2].Failure != nil || c[2].Time != "0.001" {
		t.Errorf("error case = %+v, error %+v", c[2], c[2].Error)
	}
	if c[3].Error == nil || c[3].Error.Type != "error" || c[3].Time != "0.000" {
		t.Errorf("error case without ErrorType = %+v, error %+v; want type \"error\"", c[3], c[3].Error)
	}
	if c[4].Error == nil || c[4].Failure != nil || c[4].Error.Type != "engine" {
		t.Errorf("case with Failure and Error = %+v; want only <error>", c[4])
	}
	s = got.Suites[1]
	// Time 0: the sum of the cases' times; no timestamp, hostname or properties.
	if s.Tests != "1" || s.Failures != "0" || s.Errors != "0" || s.Time != "2.000" ||
		s.Timestamp != nil || s.Hostname != nil || s.Properties != nil {
		t.Errorf("suite 1 = %+v", s)
	}
}

func TestMixedValidates(t *testing.T) {
	mustValidate(t, write(t, mixed()))
}

// TestExactOutput pins the layout: indentation, attribute order, literal
// newlines in element text.
func TestExactOutput(t *testing.T) {
	got := string(write(t, []junit.Suite{{
		Name:       "s",
		Time:       1,
		Properties: [][2]string{{"metric.m", "0.5"}},
		Cases: []junit.Case{
			{Name: "a", ClassName: "evalflow.p", Time: 0.5},
			{Name: "b", ClassName: "evalflow.p", Time: 0.5, Failure: "m = 0\ndetails", SystemOut: "SELECT\n  1"},
		},
	}}))
	want := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" failures="1" errors="0" skipped="0" time="1.000">
  <testsuite name="s" tests="2" failures="1" errors="0" skipped="0" time="1.000">
    <properties>
      <property name="metric.m" value="0.5"></property>
    </properties>
    <testcase name="a" classname="evalflow.p" time="0.500"></testcase>
    <testcase name="b" classname="evalflow.p" time="0.500">
      <failure message="m = 0&#xA;details" type="wrong">m = 0
details</failure>
      <system-out>SELECT
  1</system-out>
    </testcase>
  </testsuite>
</testsuites>
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestEscaping(t *testing.T) {
	const nasty = `a<b>&c"d'e ]]> <!-- x --> &amp;`
	doc := write(t, []junit.Suite{{
		Name:       nasty,
		Hostname:   nasty,
		Properties: [][2]string{{nasty, nasty}},
		Cases: []junit.Case{
			{Name: nasty, ClassName: nasty, Failure: nasty, SystemOut: nasty},
			{Name: "e", ClassName: "c", Error: nasty, ErrorType: nasty},
		},
	}})
	for _, raw := range []string{"a<b>", `c"d`, "d'e", "&c", "<!--", "&amp;\""} {
		if bytes.Contains(doc, []byte(raw)) {
			t.Errorf("output holds %q unescaped:\n%s", raw, doc)
		}
	}
	got := parse(t, doc)
	s := got.Suites[0]
	c := s.Cases[0]
	for what, v := range map[string]string{
		"suite name": s.Name, "hostname": *s.Hostname,
		"property name": s.Properties.Property[0].Name, "property value": s.Properties.Property[0].Value,
		"case name": c.Name, "classname": c.ClassName,
		"failure message": c.Failure.Message, "failure text": c.Failure.Text, "system-out": *c.SystemOut,
		"error message": s.Cases[1].Error.Message, "error type": s.Cases[1].Error.Type, "error text": s.Cases[1].Error.Text,
	} {
		if v != nasty {
			t.Errorf("%s = %q, want %q", what, v, nasty)
		}
	}
	mustValidate(t, doc)
}

func TestInvalidCharsRemoved(t *testing.T) {
	// NUL, ESC, a lone 0xff byte, a truncated UTF-8 sequence, an encoded
	// surrogate (invalid UTF-8), U+FFFE and U+FFFF: all removed. Tab,
	// newline, U+FFFD and astral characters are kept.
	in := "a\x00b\x1bc\xffd\xe2\x82e\xed\xa0\x80f\uFFFEg\uFFFFh\x7f\t\n\uFFFD😀"
	const want = "abcdefgh\x7f\t\n\uFFFD😀"
	doc := write(t, []junit.Suite{{
		Name:       in,
		Hostname:   in,
		Properties: [][2]string{{in, in}},
		Cases: []junit.Case{
			{Name: in, ClassName: in, Failure: in, SystemOut: in},
			{Name: "e", ClassName: "c", Error: in, ErrorType: in},
		},
	}})
	for _, bad := range []string{"\x00", "\x1b", "\xff", "\xed\xa0\x80", "\uFFFE", "\uFFFF", "&#x0;", "&#x1B;"} {
		if bytes.Contains(doc, []byte(bad)) {
			t.Errorf("output holds %q:\n%q", bad, doc)
		}
	}
	got := parse(t, doc)
	s := got.Suites[0]
	c := s.Cases[0]
	// Attribute values normalise nothing here since \t and \n are written
	// as character references; element text keeps them literally.
	for what, v := range map[string]string{
		"suite name": s.Name, "hostname": *s.Hostname,
		"property name": s.Properties.Property[0].Name, "property value": s.Properties.Property[0].Value,
		"case name": c.Name, "classname": c.ClassName,
		"failure message": c.Failure.Message, "failure text": c.Failure.Text, "system-out": *c.SystemOut,
		"error message": s.Cases[1].Error.Message, "error type": s.Cases[1].Error.Type, "error text": s.Cases[1].Error.Text,
	} {
		if v != want {
			t.Errorf("%s = %q, want %q", what, v, want)
		}
	}
	mustValidate(t, doc)
}

func TestTruncation(t *testing.T) {
	long := strings.Repeat("é", 2*junit.MaxMessageRunes)
	huge := strings.Repeat("ab€", junit.MaxBodyBytes) // 5 bytes a repeat: cut mid-rune
	got := parse(t, write(t, []junit.Suite{{Name: "s", Cases: []junit.Case{
		{Name: "long", Failure: long, SystemOut: huge},
		{Name: "exact", Error: strings.Repeat("x", junit.MaxMessageRunes)},
		{Name: "huge", Error: huge},
	}}}))
	c := got.Suites[0].Cases
	if m := c[0].Failure.Message; utf8.RuneCountInString(m) != junit.MaxMessageRunes || !strings.HasSuffix(m, "…") ||
		!strings.HasPrefix(long, strings.TrimSuffix(m, "…")) {
		t.Errorf("long message: %d runes, suffix %q; want %d runes ending in …", utf8.RuneCountInString(m), m[len(m)-6:], junit.MaxMessageRunes)
	}
	if c[0].Failure.Text != long {
		t.Errorf("failure text of %d bytes was cut, want it whole", len(long))
	}
	if m := c[1].Error.Message; m != strings.Repeat("x", junit.MaxMessageRunes) {
		t.Errorf("message of exactly %d runes was changed to %d runes", junit.MaxMessageRunes, utf8.RuneCountInString(m))
	}
	for what, v := range map[string]string{"system-out": *c[0].SystemOut, "error text": c[2].Error.Text} {
		if len(v) > junit.MaxBodyBytes || len(v) < junit.MaxBodyBytes-8 || !utf8.ValidString(v) ||
			!strings.HasSuffix(v, "…") || !strings.HasPrefix(huge, strings.TrimSuffix(v, "…")) {
			t.Errorf("%s: %d bytes, valid UTF-8 %v, suffix %q; want at most %d bytes, a prefix of the input, ending in …",
				what, len(v), utf8.ValidString(v), v[len(v)-8:], junit.MaxBodyBytes)
		}
	}
}

func TestEmpty(t *testing.T) {
	for name, suites := range map[string][]junit.Suite{
		"no suites":   nil,
		"empty suite": {{Name: "empty"}},
	} {
		t.Run(name, func(t *testing.T) {
			doc := write(t, suites)
			got := parse(t, doc)
			if got.Tests != "0" || got.Failures != "0" || got.Errors != "0" || got.Skipped != "0" || got.Time != "0.000" {
				t.Errorf("testsuites = %+v, want all counts 0", got)
			}
			if len(got.Suites) != len(suites) {
				t.Fatalf("got %d suites, want %d", len(got.Suites), len(suites))
			}
			for _, s := range got.Suites {
				if s.Tests != "0" || s.Failures != "0" || s.Errors != "0" || s.Skipped != "0" || s.Time != "0.000" || len(s.Cases) != 0 {
					t.Errorf("suite = %+v, want empty", s)
				}
			}
			mustValidate(t, doc)
		})
	}
}

func TestTimes(t *testing.T) {
	got := parse(t, write(t, []junit.Suite{{Name: "s", Time: -1, Cases: []junit.Case{
		{Name: "neg", Time: -3},
		{Name: "round", Time: 1.23456},
		{Name: "big", Time: 1e7},
	}}}))
	s := got.Suites[0]
	if s.Time != "0.000" {
		t.Errorf("negative suite time written as %s, want 0.000", s.Time)
	}
	for i, want := range []string{"0.000", "1.235", "10000000.000"} {
		if s.Cases[i].Time != want {
			t.Errorf("case %s time = %s, want %s", s.Cases[i].Name, s.Cases[i].Time, want)
		}
	}
}

// TestSchemaRejects makes sure the schema test can fail: documents that
// break the format must not validate.
func TestSchemaRejects(t *testing.T) {
	const head = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
	valid := head + `<testsuites tests="1" failures="0" errors="0" skipped="0" time="0.000">
  <testsuite name="s" tests="1" failures="0" errors="0" skipped="0" time="0.000">
    <testcase name="a" classname="c" time="0.000"></testcase>
  </testsuite>
</testsuites>`
	if ok, out := lint(t, []byte(valid)); !ok {
		t.Fatalf("the valid baseline does not validate:\n%s", out)
	}
	for name, c := range map[string]struct{ old, new, msg string }{
		"testcase without name":  {`<testcase name="a" `, `<testcase `, "attribute 'name' is required"},
		"suite without tests":    {`<testsuite name="s" tests="1" `, `<testsuite name="s" `, "attribute 'tests' is required"},
		"count not a number":     {`failures="0" errors="0" skipped="0" time="0.000">` + "\n    <testcase", `failures="many" errors="0" skipped="0" time="0.000">` + "\n    <testcase", "attribute 'failures': 'many' is not a valid value"},
		"negative time":          {`classname="c" time="0.000"`, `classname="c" time="-1"`, "attribute 'time': [facet 'minInclusive']"},
		"failure and error":      {`time="0.000"></testcase>`, `time="0.000"><failure/><error/></testcase>`, "Element 'error': This element is not expected"},
		"unknown element":        {`time="0.000"></testcase>`, `time="0.000"><output/></testcase>`, "Element 'output': This element is not expected"},
		"property without value": {`<testcase name="a"`, `<properties><property name="p"/></properties><testcase name="a"`, "attribute 'value' is required"},
		"timestamp with zone":    {`<testsuite name="s"`, `<testsuite timestamp="2025-01-01T00:00:00Z" name="s"`, "attribute 'timestamp': [facet 'pattern']"},
		"wrong root":             {`<testsuites `, `<results `, "No matching global declaration"},
	} {
		t.Run(name, func(t *testing.T) {
			doc := strings.Replace(valid, c.old, c.new, 1)
			if c.old == `<testsuites ` {
				doc = strings.Replace(doc, `</testsuites>`, `</results>`, 1)
			}
			if doc == valid {
				t.Fatalf("replacing %q changed nothing", c.old)
			}
			ok, out := lint(t, []byte(doc))
			if ok {
				t.Fatalf("schema accepts:\n%s", doc)
			}
			if !strings.Contains(out, c.msg) {
				t.Errorf("xmllint's complaint does not mention %q:\n%s", c.msg, out)
			}
		})
	}
}

type failWriter struct{ n int }

var errFull = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n <= 0 {
		return 0, errFull
	}
	w.n--
	return len(p), nil
}

func TestWriteError(t *testing.T) {
	for n := range 3 {
		if err := junit.Write(&failWriter{n: n}, mixed()); !errors.Is(err, errFull) {
			t.Errorf("writer failing after %d writes: err = %v, want %v", n, err, errFull)
		}
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "junit.xml")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := junit.WriteFile(path, mixed()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := write(t, mixed()); !bytes.Equal(got, want) {
		t.Errorf("file holds\n%s\nwant\n%s", got, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("file mode = %v (%v), want 0644", fi.Mode(), err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only junit.xml (no temporary files)", len(entries))
	}
	mustValidate(t, got)

	// A relative path writes into the current directory.
	t.Chdir(dir)
	if err := junit.WriteFile("rel.xml", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rel.xml")); err != nil {
		t.Error(err)
	}
}

func TestWriteFileError(t *testing.T) {
	dir := t.TempDir()
	// The target is a directory: the rename fails, and neither the target
	// nor a temporary file is left behind.
	target := filepath.Join(dir, "report.xml")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := junit.WriteFile(target, mixed())
	if err == nil || !strings.Contains(err.Error(), "report.xml") {
		t.Errorf("err = %v, want an error naming report.xml", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || !entries[0].IsDir() {
		t.Errorf("directory holds %v, want only the report.xml directory", entries)
	}
	if err := junit.WriteFile(filepath.Join(dir, "missing", "report.xml"), nil); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}
