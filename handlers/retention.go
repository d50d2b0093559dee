package handlers

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
)

// The retention-rule routes (docs/api.md, "Retention rules"): who manages legal holds
// manages retention, global administrators every tenant's rules, auditors their own;
// everybody else is forbidden, and another tenant's rule is not found.

const retentionRulesPath = "/api/v1/admin/retention-rules"

func (s *Server) retentionRoutes(api *mux.Router) {
	api.Handle("/admin/retention-rules", withQuery(getOrPOST(s.listRetentionRules, s.addRetentionRule), "tenant"))
	api.Handle("/admin/retention-rules/{id}", withQuery(getOrDELETE(s.getRetentionRule, s.deleteRetentionRule), "tenant"))
}

// retentionRuleJSON is a rule as the API shows it.
type retentionRuleJSON struct {
	ID        string `json:"id"`
	TenantID  string `json:"tenant_id"`
	Kind      string `json:"kind"`
	Value     string `json:"value"`
	Days      int    `json:"days"`
	CreatedBy string `json:"created_by"`
	CreatedAt string `json:"created_at"`
}

func retentionRuleView(v *app.RetentionRuleView) retentionRuleJSON {
	return retentionRuleJSON{ID: v.ID, TenantID: v.TenantID, Kind: v.Kind, Value: v.Value, Days: v.Days,
		CreatedBy: v.CreatedBy, CreatedAt: rfc3339(v.CreatedAt)}
}

// listRetentionRules answers GET /api/v1/admin/retention-rules.
func (s *Server) listRetentionRules(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.holdScope(w, r)
	if !ok {
		return
	}
	rules, err := s.app.Load().RetentionRules.List(r.Context(), scope)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	out := make([]retentionRuleJSON, len(rules))
	for i := range rules {
		out[i] = retentionRuleView(&rules[i])
	}
	writeJSON(w, http.StatusOK, map[string][]retentionRuleJSON{"retention_rules": out})
}

// addRetentionRule answers POST /api/v1/admin/retention-rules: 201 with the rule and its
// Location; in the tenant of the `tenant` parameter for a global administrator.
func (s *Server) addRetentionRule(w http.ResponseWriter, r *http.Request) {
	createInTenant(s, w, r, retentionRulesPath, func(tenant string, in app.RetentionRuleInput) (string, any, error) {
		rule, err := s.app.Load().RetentionRules.Add(r.Context(), tenant, in, metadata(r))
		if err != nil {
			return "", nil, err
		}
		return rule.ID, retentionRuleView(rule), nil
	})
}

// getRetentionRule answers GET /api/v1/admin/retention-rules/{id}.
func (s *Server) getRetentionRule(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.holdScope(w, r)
	if !ok {
		return
	}
	rule, err := s.app.Load().RetentionRules.Get(r.Context(), scope, mux.Vars(r)["id"])
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, retentionRuleView(rule))
}

// deleteRetentionRule answers DELETE /api/v1/admin/retention-rules/{id}: 204.
func (s *Server) deleteRetentionRule(w http.ResponseWriter, r *http.Request) {
	scope, ok := s.holdScope(w, r)
	if !ok {
		return
	}
	if err := s.app.Load().RetentionRules.Delete(r.Context(), scope, mux.Vars(r)["id"], metadata(r)); err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
