// A procedures.Baseline as JSON, from bts, the Tool nodes of its contracts
// (fragments/baseline_tools.cypher): each t.contract is a
// procedures.ToolContract's JSON, written by catalogue_put.cypher.
'{"tools":[' + reduce(s = '', t IN bts | s + CASE WHEN s = '' THEN '' ELSE ',' END + t.contract) + ']}'
