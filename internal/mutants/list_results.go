package main

func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "mcpserve/large-result-sent-twice",
			Why:      "a large object result goes as its JSON text beside the structured content: two full copies, and past half a MiB a server-sent event the official SDKs refuse",
			Edits:    []Edit{{Dir: "mcpserve", Find: "if len(b) > InlineText {", Replace: "if false {"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestJSONResultSentOnce"},
		},
		{
			Name:     "mcpserve/result-size-unchecked",
			Why:      "a result whose message passes what one MCP message may carry is sent anyway, and the client fails reading it instead of being told result_too_large",
			Edits:    []Edit{{Dir: "mcpserve", Find: "if sent > MaxMessage {", Replace: "if false {"}},
			Packages: []string{"./mcpserve"},
			Tests:    []string{"TestJSONResultSentOnce"},
		},
	}...)
}
