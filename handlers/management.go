package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mailledger/mailledger/app"
)

// The management API (docs/api.md, "Management"): piler's calls under /api/v1. Reads are
// GET; writes are POST with a JSON array body, whatever the Content-Type says (piler's
// clients send `curl -d @data.json`, i.e. application/x-www-form-urlencoded), applied
// all or nothing and answered {"result":"ok","count":N}. app.Management decides roles
// and tenants from the caller's app.Scope.

type management = app.Management

func (s *Server) managementRoutes(api *mux.Router) {
	api.Handle("/get_domains", withQuery(onlyGET(readCall(s, (*management).Domains))))
	api.Handle("/add_domain", withQuery(onlyPOST(writeCall(s, (*management).AddDomains))))
	api.Handle("/delete_domain", withQuery(onlyPOST(writeCall(s, (*management).DeleteDomains))))
	api.Handle("/get_customers", withQuery(onlyGET(s.customerIDs)))
	api.Handle("/get_customer_list", withQuery(onlyGET(readCall(s, (*management).Customers))))
	api.Handle("/get_customer_list/id/{id}", withQuery(onlyGET(s.customer)))
	api.Handle("/add_customer", withQuery(onlyPOST(writeCall(s, (*management).AddCustomers))))
	api.Handle("/update_customer", withQuery(onlyPOST(writeCall(s, (*management).UpdateCustomers))))
	api.Handle("/delete_customer", withQuery(onlyPOST(writeCall(s, (*management).DeleteCustomers))))
	api.Handle("/add_user", withQuery(onlyPOST(writeCall(s, (*management).AddUsers))))
	api.Handle("/update_user", withQuery(onlyPOST(writeCall(s, (*management).UpdateUsers))))
	api.Handle("/delete_user", withQuery(onlyPOST(writeCall(s, (*management).DeleteUsers))))
	api.Handle("/get_groups", withQuery(onlyGET(s.groups)))
	api.Handle("/get_group", withQuery(onlyPOST(s.group)))
	api.Handle("/add_group", withQuery(onlyPOST(writeCall(s, (*management).AddGroups))))
	api.Handle("/update_group", withQuery(onlyPOST(writeCall(s, (*management).UpdateGroups))))
	api.Handle("/delete_group", withQuery(onlyPOST(writeCall(s, (*management).DeleteGroups))))
	api.Handle("/get_header_checks", withQuery(onlyGET(readCall(s, (*management).HeaderChecks))))
	api.Handle("/add_header_check", withQuery(onlyPOST(writeCall(s, (*management).AddHeaderChecks))))
	api.Handle("/delete_header_check", withQuery(onlyPOST(writeCall(s, (*management).DeleteHeaderChecks))))
}

// mgmtCaller is the request's caller as the management use cases take it.
func mgmtCaller(r *http.Request) app.Caller {
	return app.Caller{Scope: caller(r).Scope, Meta: metadata(r)}
}

// readCall answers a GET with the array read returns.
func readCall[T any](s *Server, read func(*management, context.Context, app.Caller) ([]T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := read(s.app.Load().Management, r.Context(), mgmtCaller(r))
		if err != nil {
			writeError(w, r, s.logger, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// writeCall decodes the JSON array body, applies it with apply and answers the count.
func writeCall[T any](s *Server, apply func(*management, context.Context, app.Caller, []T) (int, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in []T
		if err := decodeArray(r, &in); err != nil {
			writeError(w, r, s.logger, err)
			return
		}
		n, err := apply(s.app.Load().Management, r.Context(), mgmtCaller(r), in)
		if err != nil {
			writeError(w, r, s.logger, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"result": "ok", "count": n})
	}
}

// customerIDs answers get_customers: the customer_id strings.
func (s *Server) customerIDs(w http.ResponseWriter, r *http.Request) {
	list, err := s.app.Load().Management.Customers(r.Context(), mgmtCaller(r))
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	ids := make([]string, len(list))
	for i := range list {
		ids[i] = list[i].CustomerID
	}
	writeJSON(w, http.StatusOK, ids)
}

// customer answers get_customer_list/id/{id}: one customer, without status.
func (s *Server) customer(w http.ResponseWriter, r *http.Request) {
	c, err := s.app.Load().Management.Customer(r.Context(), mgmtCaller(r), mux.Vars(r)["id"])
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// groups answers get_groups: [{id, groupname}].
func (s *Server) groups(w http.ResponseWriter, r *http.Request) {
	list, err := s.app.Load().Management.Groups(r.Context(), mgmtCaller(r))
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	out := make([]map[string]string, len(list))
	for i, g := range list {
		out[i] = map[string]string{"id": g.ID, "groupname": g.Groupname}
	}
	writeJSON(w, http.StatusOK, out)
}

// group answers get_group: the groups of the body's ids, whole.
func (s *Server) group(w http.ResponseWriter, r *http.Request) {
	var in []app.GroupInput
	if err := decodeArray(r, &in); err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	out, err := s.app.Load().Management.Group(r.Context(), mgmtCaller(r), in)
	if err != nil {
		writeError(w, r, s.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// decodeArray reads the body, whatever its Content-Type, as one JSON array of objects
// into v, rejecting unknown fields and trailing data.
func decodeArray(r *http.Request, v any) error {
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return fmt.Errorf("%w: the body must be a JSON array of objects", ErrInvalidJSON)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describeJSONError(err, raw)
	}
	if dec.More() {
		return fmt.Errorf("%w: data after the JSON array at %s", ErrInvalidJSON, position(raw, dec.InputOffset()))
	}
	return nil
}
