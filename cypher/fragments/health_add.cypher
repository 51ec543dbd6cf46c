// Version v's health vector with one run counted: the rule of
// procedures.HealthDelta.Apply, element by element
// new[i] = max(old[i] * keep[i] + add[i], floor[i]), a missing element read
// as 0, over $health (the run's Delta: {keep, add, floor}, lists of one
// length). graph/neo4j's TestHealthAddIsGos checks it against Go on runs of
// every kind. use.cypher and use_health.cypher name it.
[i IN range(0, size($health.add) - 1) |
  CASE WHEN coalesce(v.health[i], 0) * $health.keep[i] + $health.add[i] > $health.floor[i]
       THEN coalesce(v.health[i], 0) * $health.keep[i] + $health.add[i]
       ELSE $health.floor[i] END]
