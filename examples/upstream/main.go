// Command upstream is a tiny stand-in for a PanDA tool server, for the
// README's walkthrough: it answers procgraph's upstream-http calls
// (POST {"tool", "arguments"} → {"result": …}) with made-up data and logs
// each call's tool name.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8475", "listen address")
	flag.Parse()
	http.HandleFunc("POST /", handle)
	log.Printf("upstream tool server on http://%s", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}

func handle(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Tool      string         `json:"tool"`
		Arguments map[string]any `json:"arguments"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		reply(w, map[string]any{"error": map[string]any{"message": "bad request: " + err.Error()}})
		return
	}
	log.Printf("call %s", req.Tool)
	result, ok := answer(req.Tool, req.Arguments)
	if !ok {
		reply(w, map[string]any{"error": map[string]any{"message": "unknown tool " + req.Tool}})
		return
	}
	reply(w, map[string]any{"result": result})
}

func answer(tool string, args map[string]any) (any, bool) {
	switch tool {
	case "get_task_jobs_summary":
		return map[string]any{"task_id": args["task_id"], "finished": 120, "failed": 3}, true
	case "find_similar_successful_tasks":
		return map[string]any{"tasks": []any{map[string]any{"task_id": 101}, map[string]any{"task_id": 102}}}, true
	case "get_failed_job_log_summary":
		return map[string]any{"errors": []any{"input file not found"}}, true
	case "compare_failed_vs_successful_job_logs":
		return map[string]any{"difference": "failed jobs read from a dataset that was deleted"}, true
	case "get_scout_job_details":
		return map[string]any{"scouts": []any{map[string]any{"panda_id": 7, "status": "finished"}}}, true
	case "get_task_input_datasets":
		return map[string]any{"datasets": []any{"data24:AOD.123"}}, true
	case "query_past_causes_for_symptom":
		return map[string]any{"causes": []any{map[string]any{"cause_name": "input dataset unavailable"}}}, true
	case "query_past_procedures_for_cause":
		return map[string]any{"procedures": []any{"proc__compare_failed_vs_successful_job_logs__find_similar_successful_tasks__get_failed_job_log_summary"}}, true
	case "retry_task", "kill_job", "record_note":
		return map[string]any{"ok": true}, true
	case "get_retry_chain", "fetch_brokerage_context", "search_panda_docs":
		return map[string]any{"items": []any{}}, true
	}
	return nil, false
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
