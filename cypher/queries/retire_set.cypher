// Stores a procedure's retirement (Store.SetRetired): $at, $by and $reason
// are null to bring it back (setting a property to null removes it). The
// procedure then moves to its class (Class.Retired). No row: no such
// procedure.
MATCH (p:Procedure {name: $name})
SET p.retired_at = $at,
    p.retired_by = $by,
    p.retired_reason = $reason
WITH p
#include class_sync
RETURN p.name AS name;
