// search.Score of a search hit: its text relevance score and its procedure
// p's frequency, weighted by $frequency_weight (search.FrequencyWeight):
// text × (1 + weight × ln(1 + frequency)), to 6 decimals. Checked against
// Go by graph/neo4j's TestSearchScoreIsGos.
round(score * (1 + $frequency_weight * log(1 + p.frequency)), 6)
