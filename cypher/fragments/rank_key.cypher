// The key Find orders by, an expression over p (rank_set stores it as
// p.rank; find_all_page.cypher and find_page.cypher walk the procedure_rank
// index in ascending order): its string order is Find's order,
// findorder.Compare (frequency desc, last_used_at desc with never used
// last, name asc; TestRankKeyIsCompareFind checks it on every edge). It is
//   19 digits: 9223372036854775807 - frequency, zero-padded
//   '|'
//   last_used_at: '0' + 19 digits of 9223372036854775807 - epoch millis
//                 (a time since 1970), '1' + 19 digits of -1 - epoch millis
//                 (a time before), or '2' when never used
//   '|' name
right('0000000000000000000' + toString(9223372036854775807 - p.frequency), 19) + '|' +
    CASE
      WHEN p.last_used_at IS NULL THEN '2'
      WHEN p.last_used_at.epochMillis >= 0
        THEN '0' + right('0000000000000000000' + toString(9223372036854775807 - p.last_used_at.epochMillis), 19)
      ELSE '1' + right('0000000000000000000' + toString(-1 - p.last_used_at.epochMillis), 19)
    END + '|' + p.name
