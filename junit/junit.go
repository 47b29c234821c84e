// Package junit writes evaluation results as JUnit XML in the Ant/Surefire
// format that CI servers (Jenkins, GitLab, GitHub test reporters) read:
//
//	<testsuites tests=.. failures=.. errors=.. skipped=.. time=..>
//	  <testsuite name=.. tests=.. failures=.. errors=.. skipped=.. time=.. timestamp=.. hostname=..>
//	    <properties><property name="metric.NAME" value=".."/></properties>
//	    <testcase name="ITEM" classname="evalflow.PIPELINE" time="..">
//	      <failure message=".." type="wrong">details</failure>
//	      <system-out>final query</system-out>
//	    </testcase>
//	  </testsuite>
//	</testsuites>
//
// A run (or one sweep cell) is one Suite, an evaluated item is one Case. A
// Case with Error set is written as <error> and counted as an error (a
// harness failure); otherwise one with Failure set is written as <failure
// type="wrong"> and counted as a failure (a wrong answer). Error wins when
// both are set.
//
// All text is made XML-safe: characters that XML 1.0 does not allow (control
// characters other than tab, newline and carriage return, U+FFFE, U+FFFF) and
// bytes that are not valid UTF-8 (which includes encoded surrogates) are
// removed, then encoding/xml escapes the rest. A message attribute is cut to
// MaxMessageRunes runes and an element body to MaxBodyBytes bytes, both
// ending in "…" when cut. junit/testdata/junit.xsd describes the output.
package junit

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"
)

// Limits on text written to the document.
const (
	// MaxMessageRunes bounds the message attribute of <failure> and <error>.
	MaxMessageRunes = 500
	// MaxBodyBytes bounds the text of <failure>, <error> and <system-out>.
	MaxBodyBytes = 64 << 10
)

// ellipsis marks text that was cut.
const ellipsis = "…"

// timestampLayout is ISO 8601 without a zone, as Ant writes it; Write
// converts timestamps to UTC first.
const timestampLayout = "2006-01-02T15:04:05"

// Case is one <testcase>: one evaluated item.
type Case struct {
	Name      string  // item id
	ClassName string  // e.g. "evalflow.<pipeline name>" or the sweep cell
	Time      float64 // seconds
	Failure   string  // non-empty: <failure message=... type="wrong">text</failure>
	Error     string  // non-empty: <error message=... type=ErrorType>text</error>
	ErrorType string  // the error class; "error" when empty
	SystemOut string  // optional: final query / details
}

// Suite is one <testsuite>: one run or one sweep cell.
type Suite struct {
	Name       string
	Timestamp  time.Time // written in UTC; omitted when zero
	Hostname   string    // omitted when empty
	Time       float64   // seconds; when 0, the sum of the cases' times
	Properties [][2]string
	Cases      []Case
}

// counts are the attributes tests, failures, errors and skipped.
type counts struct{ tests, failures, errors, skipped int }

func (c *counts) add(o counts) {
	c.tests += o.tests
	c.failures += o.failures
	c.errors += o.errors
	c.skipped += o.skipped
}

func (c counts) attrs() []xml.Attr {
	return []xml.Attr{
		attr("tests", strconv.Itoa(c.tests)),
		attr("failures", strconv.Itoa(c.failures)),
		attr("errors", strconv.Itoa(c.errors)),
		attr("skipped", strconv.Itoa(c.skipped)),
	}
}

func (s *Suite) counts() counts {
	c := counts{tests: len(s.Cases)}
	for i := range s.Cases {
		switch {
		case s.Cases[i].Error != "":
			c.errors++
		case s.Cases[i].Failure != "":
			c.failures++
		}
	}
	return c
}

func (s *Suite) time() float64 {
	if s.Time != 0 {
		return s.Time
	}
	var t float64
	for i := range s.Cases {
		t += seconds(s.Cases[i].Time)
	}
	return t
}

// Write writes an XML declaration and a <testsuites> element holding one
// <testsuite> per suite; the counts are computed from the cases.
func Write(w io.Writer, suites []Suite) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	var total counts
	var totalTime float64
	for i := range suites {
		total.add(suites[i].counts())
		totalTime += seconds(suites[i].time())
	}
	root := xml.StartElement{Name: xml.Name{Local: "testsuites"}}
	root.Attr = append(total.attrs(), attr("time", formatSeconds(totalTime)))
	if err := enc.EncodeToken(root); err != nil {
		return err
	}
	for i := range suites {
		if err := writeSuite(enc, &suites[i]); err != nil {
			return err
		}
	}
	if err := enc.EncodeToken(root.End()); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func writeSuite(enc *xml.Encoder, s *Suite) error {
	start := xml.StartElement{Name: xml.Name{Local: "testsuite"}}
	start.Attr = append([]xml.Attr{attr("name", clean(s.Name))}, s.counts().attrs()...)
	start.Attr = append(start.Attr, attr("time", formatSeconds(s.time())))
	if !s.Timestamp.IsZero() {
		start.Attr = append(start.Attr, attr("timestamp", s.Timestamp.UTC().Format(timestampLayout)))
	}
	if s.Hostname != "" {
		start.Attr = append(start.Attr, attr("hostname", clean(s.Hostname)))
	}
	if err := enc.EncodeToken(start); err != nil {
		return err
	}
	if len(s.Properties) > 0 {
		props := xml.StartElement{Name: xml.Name{Local: "properties"}}
		if err := enc.EncodeToken(props); err != nil {
			return err
		}
		for _, p := range s.Properties {
			if err := empty(enc, "property", attr("name", clean(p[0])), attr("value", body(p[1]))); err != nil {
				return err
			}
		}
		if err := enc.EncodeToken(props.End()); err != nil {
			return err
		}
	}
	for i := range s.Cases {
		if err := writeCase(enc, &s.Cases[i]); err != nil {
			return err
		}
	}
	return enc.EncodeToken(start.End())
}

func writeCase(enc *xml.Encoder, c *Case) error {
	start := xml.StartElement{Name: xml.Name{Local: "testcase"}, Attr: []xml.Attr{
		attr("name", clean(c.Name)),
		attr("classname", clean(c.ClassName)),
		attr("time", formatSeconds(c.Time)),
	}}
	if err := enc.EncodeToken(start); err != nil {
		return err
	}
	var err error
	switch {
	case c.Error != "":
		typ := c.ErrorType
		if typ == "" {
			typ = "error"
		}
		err = text(enc, "error", c.Error, attr("message", message(c.Error)), attr("type", clean(typ)))
	case c.Failure != "":
		err = text(enc, "failure", c.Failure, attr("message", message(c.Failure)), attr("type", "wrong"))
	}
	if err != nil {
		return err
	}
	if c.SystemOut != "" {
		if err := text(enc, "system-out", c.SystemOut); err != nil {
			return err
		}
	}
	return enc.EncodeToken(start.End())
}

// text writes <name attrs...>s</name>, s cleaned and cut to MaxBodyBytes.
// Tokens keep newlines in the text literal (Marshal would write &#xA;).
func text(enc *xml.Encoder, name string, s string, attrs ...xml.Attr) error {
	start := xml.StartElement{Name: xml.Name{Local: name}, Attr: attrs}
	if err := enc.EncodeToken(start); err != nil {
		return err
	}
	if err := enc.EncodeToken(xml.CharData(body(s))); err != nil {
		return err
	}
	return enc.EncodeToken(start.End())
}

// empty writes an element without content.
func empty(enc *xml.Encoder, name string, attrs ...xml.Attr) error {
	start := xml.StartElement{Name: xml.Name{Local: name}, Attr: attrs}
	if err := enc.EncodeToken(start); err != nil {
		return err
	}
	return enc.EncodeToken(start.End())
}

func attr(name, value string) xml.Attr {
	return xml.Attr{Name: xml.Name{Local: name}, Value: value}
}

// seconds maps NaN, infinities and negative durations to 0.
func seconds(t float64) float64 {
	if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
		return 0
	}
	return t
}

// formatSeconds writes a duration the way Ant does: decimal seconds with
// millisecond precision.
func formatSeconds(t float64) string {
	return strconv.FormatFloat(seconds(t), 'f', 3, 64)
}

// allowed reports whether r is a character XML 1.0 allows
// (https://www.w3.org/TR/xml/#charsets).
func allowed(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return true
	case r < 0x20:
		return false
	case r <= 0xD7FF:
		return true
	case r < 0xE000:
		return false // surrogates
	case r <= 0xFFFD:
		return true
	case r < 0x10000:
		return false // U+FFFE, U+FFFF
	default:
		return r <= utf8.MaxRune
	}
}

// clean removes the characters XML 1.0 does not allow and the bytes that
// are not valid UTF-8 (an encoded surrogate is invalid UTF-8 in Go). A
// U+FFFD already present in s is kept.
func clean(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || !allowed(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !(r == utf8.RuneError && n == 1) && allowed(r) {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// message is the cleaned s cut to MaxMessageRunes runes.
func message(s string) string {
	s = clean(s)
	if utf8.RuneCountInString(s) <= MaxMessageRunes {
		return s
	}
	n, i := 0, 0
	for i = range s {
		if n == MaxMessageRunes-1 {
			break
		}
		n++
	}
	return s[:i] + ellipsis
}

// body is the cleaned s cut to at most MaxBodyBytes bytes at a rune
// boundary.
func body(s string) string {
	s = clean(s)
	if len(s) <= MaxBodyBytes {
		return s
	}
	i := MaxBodyBytes - len(ellipsis)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + ellipsis
}

// WriteFile writes the document to path atomically: to a temporary file in
// the same directory, synced, then renamed over path. On error path is left
// as it was and the temporary file is removed.
func WriteFile(path string, suites []Suite) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("junit: %s: %w", path, err)
		}
	}()
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := Write(f, suites); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
