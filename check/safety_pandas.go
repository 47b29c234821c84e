package check

import (
	"regexp"
	"strings"
	"sync"
)

// Pandas is the language name of generated pandas (Python) code.
const Pandas = "pandas"

// pandasRule is one refusal: a pattern and the reason given.
type pandasRule struct {
	re     *regexp.Regexp
	reason string
}

// The pandas engine's sandbox (docs/engines.md) is what contains generated
// code; this static check only refuses, before anything runs, code whose
// text reaches for the system: process, network, file-system and
// introspection modules, dynamic evaluation, and writers. It reads the code
// with comments and string contents blanked, so a word inside a string is
// not a false positive; recall comes first, as for the query languages.
// The patterns are compiled at first use, not at init.
var pandasUnsafe = sync.OnceValue(func() []pandasRule {
	return []pandasRule{
		{regexp.MustCompile(`\b(import|from)\s+(os|sys|subprocess|socket|shutil|ctypes|multiprocessing|threading|signal|pathlib|importlib|builtins|pickle|marshal|requests|urllib|http|ftplib|smtplib|telnetlib|asyncio|resource|pty|fcntl|mmap|tempfile|glob|io)\b`), "imports a system, network or file module"},
		{regexp.MustCompile(`\b__import__\s*\(|\b(eval|exec|compile|globals|locals|vars|getattr|setattr|delattr|breakpoint|input)\s*\(`), "dynamic evaluation or introspection"},
		{regexp.MustCompile(`\bopen\s*\(`), "opens a file"},
		{regexp.MustCompile(`\.\s*(to_csv|to_parquet|to_json|to_excel|to_pickle|to_sql|to_hdf|to_feather|to_html|to_latex|to_markdown|to_clipboard|to_stata|to_orc|to_xml)\s*\(`), "writes a file"},
		{regexp.MustCompile(`\bpd\s*\.\s*read_[a-z_]+\s*\(|\bpandas\s*\.\s*read_[a-z_]+\s*\(`), "reads files or URLs outside the given tables"},
		{regexp.MustCompile(`__[a-z]+__`), "touches dunder attributes"},
		{regexp.MustCompile(`\b(os|sys|subprocess|socket|shutil)\s*\.`), "uses a system module"},
	}
})

// The patterns are compiled at first use, not at init.
var (
	pyString = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?s)("""|''')(.*?)("""|''')|"(\\.|[^"\\\n])*"|'(\\.|[^'\\\n])*'`)
	})
	pyComment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`#[^\n]*`) })
)

func safePandas(code string) (bool, string) {
	// Blank string contents first, then comments (a # inside a string is
	// gone by then), keeping the quotes so the structure stays.
	blank := pyString().ReplaceAllStringFunc(code, func(s string) string {
		return `""`
	})
	blank = pyComment().ReplaceAllString(blank, "")
	for _, u := range pandasUnsafe() {
		if loc := u.re.FindStringIndex(blank); loc != nil {
			return false, u.reason + ": " + strings.TrimSpace(blank[loc[0]:loc[1]])
		}
	}
	return true, ""
}
