// The tools a batch of dumped procedures call (Store.Load), before
// load_procedures.cypher links them: each merged once per batch.
UNWIND $tools AS name
MERGE (:Tool {name: name});
