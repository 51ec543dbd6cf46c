package main

func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "obs/upstreams-read-scope",
			Why:      "GET /v1/upstreams needs only the read scope: an agent's token learns which servers stand behind its tools, their state and their failures",
			Edits:    []Edit{{Dir: "api", Files: "server.go", Find: `pattern: "/v1/upstreams", scope: auth.ScopeAdmin`, Replace: `pattern: "/v1/upstreams", scope: auth.ScopeRead`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestUpstreamsSeenThroughMain"},
		},
		{
			Name:     "obs/upstreams-show-command",
			Why:      "a server's status names what the Dispatcher reaches (its command line or URL) as its transport: a path, a URL's query or an argument with a secret reaches every caller of GET /v1/upstreams",
			Edits:    []Edit{{Dir: "mcpdispatch", Files: "status.go", Find: "st := DispatcherStatus{Transport: d.stats.transport,", Replace: "st := DispatcherStatus{Transport: d.target,"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestUpstreamsSeenThroughMain"},
		},
		{
			Name:     "obs/readyz-all-ok",
			Why:      "/readyz says ok whatever the upstream servers' states: a server that is down goes unseen by every probe",
			Edits:    []Edit{{Dir: "api", Files: "upstreams.go", Find: "out.Status = mcpdispatch.Overall(out.Upstreams)", Replace: "out.Status = readyOK"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestUpstreamsSeenThroughMain"},
		},
		{
			Name:     "obs/down-is-ok",
			Why:      "a server whose connection attempts fail is reported ok: /readyz, GET /v1/upstreams, the metrics and doctor hide an outage",
			Edits:    []Edit{{Dir: "mcpdispatch", Files: "status.go", Find: "\tcase d.failures > 0:\n\t\tst.State = StateDown", Replace: "\tcase d.failures > 0:\n\t\tst.State = StateOK"}},
			Packages: []string{"./mcpdispatch", "./cmd/procgraph"},
			Tests:    []string{"TestUpstreamsSeenThroughMain"},
		},
		{
			Name:     "obs/doctor-own-flags",
			Why:      "doctor checks the flags it was given although a server answers: it reports a setup that is not the one running",
			Edits:    []Edit{{Dir: "cmd/procgraph", Files: "doctor.go", Find: "\tif serverUp {\n\t\t// A server answers", Replace: "\tif false && serverUp {\n\t\t// A server answers"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestDoctorHealthy", "TestUpstreamsSeenThroughMain"},
		},
	}...)
}
