package metrics

// LLM-judge metrics: metric-calculators' query correctness (requirements
// “Query Correctness Metric”, “Result Caching”, “Error Reporting”) and the
// QAS Evaluation System's semantic similarity. They are the metrics package's only
// model callers, and they call through package llm, which owns limits,
// retries and the response cache:
//
//	model "judge" { provider = "anthropic"  model = "claude-sonnet-4-5" }
//	stage "score" {
//	  metric "query_correctness" { model = model.judge }
//	  metric "qas_semantic"      { model = model.judge }
//	  metric "qas_score" {}      # reads qas_semantic
//	}
//
// query_correctness: identical queries (JudgeShortcut) score 1.0 with "Queries
// are identical" and no call; otherwise the judge answers 1.0 (semantically
// correct), 0.5 (partially) or 0.0 (incorrect) with its reasoning. Verdicts
// are memoised in memory by the SHA-256 of the (generated, expected) pair
// and cached on disk with the response cache, so a repeated run makes no
// call. A judge that takes longer than timeout (30 s) yields 0.0 with the
// error "LLM judge timeout" (“Error Reporting” requirement); other failures yield 0.0 with
// their error; neither is cached.
//
// qas_semantic: the judge's 0–1 similarity with an explanation; identical
// queries score 1.0 ("Semantically identical SQL") with no call.
//
// Both implement LLMJudgeAsync: the score stage starts them before the
// deterministic metrics of the same item, which run while the judge waits
// for the model (“Performance Requirements”).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/llm"
)

// LLMJudgeAsync is implemented by item metrics that wait on a model: the
// score stage may run them concurrently with the other metrics of the same
// record. Such a metric reads only the record's query and gold fields and
// writes nothing but the score it returns.
type LLMJudgeAsync interface {
	Async() bool
}

// LLMJudgeTimeout is the default bound on one judge verdict (“Error Reporting” requirement).
const LLMJudgeTimeout = 30 * time.Second

// LLMJudgeVerdict is one judge answer.
type LLMJudgeVerdict struct {
	Score     float64 `json:"score"`
	Reasoning string  `json:"reasoning"`
	Called    bool    `json:"-"` // a model was asked (not the shortcut, not the memo)
	Cached    bool    `json:"-"` // the response cache answered
}

const llmJudgeCorrectnessSystem = `You are an expert SQL reviewer. Decide whether a generated query answers the same question as the expected query.
Judge semantics, not syntax: join order, aliases, equivalent WHERE clauses and equivalent boolean representations (true vs 1) do not matter.
Score 1.0 if semantically correct, 0.5 if partially correct (right tables and columns but a missing or wrong filter, grouping or ordering), 0.0 if incorrect (wrong tables, wrong logic).
Answer with JSON only: {"score": 1.0 | 0.5 | 0.0, "reasoning": "one sentence"}`

const llmJudgeSemanticSystem = `You compare a generated SQL query with the expected SQL for the same question and rate their semantic similarity.
Evaluate logical equivalence, not syntax; tolerate different approaches (join order, aliases, subqueries vs joins).
Score from 0.0 (unrelated logic) to 1.0 (logically identical); give partial credit for close queries (for example, correct logic but a missing ORDER BY: about 0.85).
Answer with JSON only: {"score": <number between 0 and 1>, "explanation": "one sentence"}`

type llmJudge struct {
	info     Info
	client   *llm.Client
	timeout  time.Duration
	foldCase bool
	graded   bool // snap to {0, 0.5, 1}
	system   string
	reason   string // JSON field of the explanation

	mu   sync.Mutex
	memo map[string]LLMJudgeVerdict
}

func (j *llmJudge) Info() Info { return j.info }

// Provenance is the judge's model as its endpoint reported it, with a hash
// of its system prompt (the rubric).
func (j *llmJudge) Provenance() llm.Provenance {
	p := j.client.Provenance()
	p.PromptSHA256 = map[string]string{"judge:" + j.info.Name + ".system": llm.TextSHA256(j.system)}
	return p
}
func (j *llmJudge) Async() bool { return true }

// Score judges the final query of sample 0 against the gold query.
func (j *llmJudge) Score(ctx context.Context, in Input) item.Score {
	name := j.info.Name
	gold, pred, s, ok := queryPair(name, in.Record)
	if !ok {
		return s
	}
	if strings.TrimSpace(pred) == "" {
		return item.Score{Name: name, Value: 0}
	}
	v, err := j.Judge(ctx, in.Record.Item.Question, pred, gold)
	if err != nil {
		// A judge that failed or answered unparsably computed nothing:
		// the metric is null for this item, its error counted per metric
		// — not a 0 that would pull the mean down by the judge's faults.
		return item.Score{Name: name, Null: true, Err: err.Error()}
	}
	return item.Score{Name: name, Value: v.Score, Note: v.Reasoning}
}

// Judge returns the verdict on (generated, expected): the shortcut, the
// in-memory memo, or the model (through the response cache).
func (j *llmJudge) Judge(ctx context.Context, question, generated, expected string) (LLMJudgeVerdict, error) {
	if score, why, ok := JudgeShortcut(generated, expected, j.foldCase); ok {
		if !j.graded {
			why = "Semantically identical SQL"
		}
		return LLMJudgeVerdict{Score: score, Reasoning: why}, nil
	}
	h := sha256.Sum256([]byte(question + "\x00" + generated + "\x00" + expected))
	key := hex.EncodeToString(h[:])
	j.mu.Lock()
	v, ok := j.memo[key]
	j.mu.Unlock()
	if ok {
		return v, nil
	}
	ctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	user := fmt.Sprintf("Question: %s\n\nExpected SQL:\n%s\n\nGenerated SQL:\n%s", question, expected, generated)
	req := j.client.NewRequest(j.system, []llm.Message{{Role: "user", Content: user}}, 0)
	zero := 0.0
	req.Temperature = &zero
	resp, err := j.client.CompleteKind(ctx, "judge:"+j.info.Name, req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return LLMJudgeVerdict{}, fmt.Errorf("LLM judge timeout (no verdict within %s)", j.timeout)
		}
		return LLMJudgeVerdict{}, fmt.Errorf("LLM judge failed: %w", err)
	}
	v, err = parseLLMJudgeVerdict(resp.Text, j.reason, j.graded)
	if err != nil {
		return LLMJudgeVerdict{}, err
	}
	v.Called, v.Cached = !resp.CacheHit, resp.CacheHit
	j.mu.Lock()
	j.memo[key] = v
	j.mu.Unlock()
	return v, nil
}

var llmJudgeObjectRe = lazyRE(`(?s)\{.*\}`)
var llmJudgeNumberRe = lazyRE(`(?i)score["'\s:=]*([01](?:\.\d+)?)`)

// parseLLMJudgeVerdict reads {"score": x, reason: "..."} from a judge's
// answer (fenced or not); graded scores snap to the nearest of 0, 0.5, 1.
func parseLLMJudgeVerdict(text, reasonField string, graded bool) (LLMJudgeVerdict, error) {
	var v LLMJudgeVerdict
	found := false
	if m := llmJudgeObjectRe.FindString(text); m != "" {
		var raw map[string]any
		if json.Unmarshal([]byte(m), &raw) == nil {
			switch x := raw["score"].(type) {
			case float64:
				v.Score, found = x, true
			case string:
				if f, err := strconv.ParseFloat(x, 64); err == nil {
					v.Score, found = f, true
				}
			}
			for _, k := range []string{reasonField, "reasoning", "explanation"} {
				if s, ok := raw[k].(string); ok && s != "" {
					v.Reasoning = s
					break
				}
			}
		}
	}
	if !found {
		if m := llmJudgeNumberRe.FindStringSubmatch(text); m != nil {
			v.Score, _ = strconv.ParseFloat(m[1], 64)
			found = true
			v.Reasoning = strings.TrimSpace(text)
		}
	}
	if !found || math.IsNaN(v.Score) {
		return v, fmt.Errorf("LLM judge answer has no score: %.200q", text)
	}
	v.Score = math.Max(0, math.Min(1, v.Score))
	if graded {
		v.Score = math.Round(v.Score*2) / 2
	}
	return v, nil
}

// PoolOption is the Options key under which the score stage passes the
// run's model clients (an *llm.Pool) to metrics that call a model. HCL
// cannot produce such a value, so a metric block cannot set it.
const PoolOption = "\x00llm_pool"

func newLLMJudge(info Info, o Options, graded bool, system, reason string) (ItemMetric, error) {
	mv, ok := o["model"]
	if !ok {
		return nil, errors.New(`option "model" is required: model = model.NAME`)
	}
	m, _ := mv.(map[string]any)
	if m == nil || m["block"] != "model" {
		return nil, errors.New(`option "model" must be a reference like model.NAME`)
	}
	cfg, err := llm.ParseConfig(m)
	if err != nil {
		return nil, fmt.Errorf("model.%v: %w", m["name"], err)
	}
	pool, _ := o[PoolOption].(*llm.Pool)
	if pool == nil {
		pool = llm.NewPool(nil) // a judge built on its own (tests, tools)
	}
	client, err := pool.Client(cfg)
	if err != nil {
		return nil, err
	}
	j := &llmJudge{info: info, client: client, timeout: LLMJudgeTimeout, graded: graded, system: system, reason: reason,
		memo: map[string]LLMJudgeVerdict{}}
	if j.foldCase, err = o.Bool("fold_case", false); err != nil {
		return nil, err
	}
	secs, err := o.Float("timeout", LLMJudgeTimeout.Seconds())
	if err != nil {
		if s, ok := o["timeout"].(string); ok {
			d, perr := time.ParseDuration(s)
			if perr != nil {
				return nil, fmt.Errorf("option \"timeout\" must be a duration such as \"30s\": %v", perr)
			}
			secs, err = d.Seconds(), nil
		} else {
			return nil, err
		}
	}
	j.timeout = time.Duration(secs * float64(time.Second))
	if s, err := o.String("system", ""); err != nil {
		return nil, err
	} else if s != "" {
		j.system = s
	}
	return j, nil
}

var llmJudgeCorrectnessInfo = Info{
	Name:        "query_correctness",
	Description: "LLM-judge query correctness: 1.0 semantically correct, 0.5 partially correct, 0.0 incorrect; identical queries score 1.0 without a call; verdicts cached; 0.0 with an error after the 30 s timeout.",
	Reference:   "*metric-calculators*, requirements “Query Correctness Metric”, “Result Caching” and “Error Reporting”",
	Inputs:      "Record.Final().Query, Record.Item.Gold, Record.Item.Question; option model = model.NAME",
	Range:       "{0,0.5,1}",
}

var llmJudgeSemanticInfo = Info{
	Name:        "qas_semantic",
	Description: "QAS semantic similarity by an LLM judge (0–1, logical equivalence not syntax); feeds qas_score. Identical queries score 1.0 without a call.",
	Reference:   "*QAS Evaluation System*, “1. Semantic Similarity (40%)”",
	Inputs:      "Record.Final().Query, Record.Item.Gold, Record.Item.Question; option model = model.NAME",
	Range:       "[0,1]",
}

func init() {
	opts := []string{"model", "timeout", "fold_case", "system"}
	Register(Def{Info: llmJudgeCorrectnessInfo, Options: opts, NewItem: func(o Options) (ItemMetric, error) {
		return newLLMJudge(llmJudgeCorrectnessInfo, o, true, llmJudgeCorrectnessSystem, "reasoning")
	}})
	Register(Def{Info: llmJudgeSemanticInfo, Options: opts, NewItem: func(o Options) (ItemMetric, error) {
		return newLLMJudge(llmJudgeSemanticInfo, o, false, llmJudgeSemanticSystem, "explanation")
	}})
}
