package tasks

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/store"
)

// In-client confirmation. A rule with confirm: client lets the caller
// decide its own request in the client, where the client can ask its user
// (elicitation). As a task, such a request is input_required: tasks/get
// carries the question under inputRequests (ConfirmKey, an
// elicitation/create asking for confirm: true, policy.ConfirmSchema), and
// the client's tasks/update answers it. The answer is recorded as every
// decision is, by "PRINCIPAL (in the client)", as a confirmation over a
// session is (policy.Executor); an approved request then runs as any
// other. Whether a task may be decided so is fixed when it is made,
// signed into its id.

// ConfirmKey is the key of the confirmation in a task's inputRequests and
// in the inputResponses of the tasks/update that answers it.
const ConfirmKey = "approval"

// confirmable reports whether the caller of round may decide in the
// client a request a rule with confirm holds.
func (t *Tasks) confirmable(round *rounds.Round, confirm string) bool {
	if confirm != policy.ConfirmClient || t.o.SeparateApprover || round == nil {
		return false
	}
	var m map[string]json.RawMessage
	var caps struct {
		Elicitation json.RawMessage `json:"elicitation"`
	}
	if json.Unmarshal(round.Meta, &m) != nil || json.Unmarshal(m[capabilitiesKey], &caps) != nil {
		return false
	}
	return len(caps.Elicitation) > 0 && caps.Elicitation[0] == '{'
}

// confirmRequest is the inputRequests of a's task that waits for its
// caller's confirmation.
func confirmRequest(a *store.Approval) json.RawMessage {
	b, _ := json.Marshal(map[string]any{ConfirmKey: map[string]any{
		"method": "elicitation/create",
		"params": map[string]any{
			"mode":            "form",
			"message":         policy.ConfirmMessage(a),
			"requestedSchema": policy.ConfirmSchema(),
		},
	}})
	return b
}

// Update takes the client's answers (inputResponses, a JSON object) to
// task id of c: an answer to the confirmation of a task that waits for it
// decides its request, approved only when accepted with confirm: true
// (policy.Confirmed).
// Any other answer, or a task that waits for none, changes nothing.
func (t *Tasks) Update(ctx context.Context, id string, c Caller, responses json.RawMessage) error {
	a, confirm, err := t.open(ctx, id, c)
	if err != nil || !confirm || a.State != store.StatePending || !a.ExpiresAt.After(t.o.Now()) {
		return err
	}
	var answers map[string]struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	json.Unmarshal(responses, &answers)
	answer, ok := answers[ConfirmKey]
	if !ok {
		return nil
	}
	approve := policy.Confirmed(answer.Action, answer.Content)
	err = t.o.Decide(ctx, a.ID, approve, c.Principal+" (in the client)", c.Tenant, "answered in the client: "+answer.Action)
	if errors.Is(err, store.ErrConflict) {
		return nil // decided meanwhile: that decision stands
	}
	return err
}
