package kb_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors"
)

// question is one held-out question and the document that answers it.
type question struct {
	Q      string `json:"q"`
	Source string `json:"source"`
}

func questions(t testing.TB) []question {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "questions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Questions []question `json:"questions"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Questions) < 25 {
		t.Fatalf("%d questions: the set has at least 25", len(f.Questions))
	}
	return f.Questions
}

// quality is how c ranks the questions: the share with a passage of
// their document among the first five, the share with one first, and
// the mean reciprocal rank of the first such passage within five.
type quality struct {
	top5, top1, mrr float64
}

// measure ranks qs with c, and lists the questions missed.
func measure(t *testing.T, c connectors.Connector, who caller, root string, qs []question) (quality, []string) {
	t.Helper()
	var q5 quality
	var missed []string
	for _, q := range qs {
		r := search(t, c, who, q.Q, 5)
		rank := 0
		for i, p := range r.Passages {
			if rank == 0 && p.Source == filepath.Join(root, filepath.FromSlash(q.Source)) {
				rank = i + 1
			}
		}
		if rank > 0 {
			q5.top5++
			q5.mrr += 1 / float64(rank)
			if rank == 1 {
				q5.top1++
			}
		} else {
			var got []string
			for _, p := range r.Passages {
				got = append(got, strings.TrimPrefix(p.Source, root+"/"))
			}
			missed = append(missed, q.Q+" → want "+q.Source+", got "+strings.Join(got, ", "))
		}
	}
	n := float64(len(qs))
	return quality{top5: q5.top5 / n, top1: q5.top1 / n, mrr: q5.mrr / n}, missed
}

// minTop5 is the share of held-out questions BM25 alone must answer
// within the first five passages.
const minTop5 = 0.8

// TestQualityTop5 ranks the shipped corpus for the held-out questions
// (testdata/questions.json, written before the ranking) with BM25 alone.
func TestQualityTop5(t *testing.T) {
	root := corpus(t)
	c := build(t, "kb", folderConfig(root))
	qs := questions(t)
	q, missed := measure(t, c, alice, root, qs)
	t.Logf("BM25 alone: top-5 %.3f, top-1 %.3f, MRR@5 %.3f (%d questions)", q.top5, q.top1, q.mrr, len(qs))
	for _, m := range missed {
		t.Logf("missed: %s", m)
	}
	if q.top5 < minTop5 {
		t.Errorf("top-5 %.3f, below %.2f", q.top5, minTop5)
	}
}
