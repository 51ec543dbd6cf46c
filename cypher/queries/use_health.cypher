// A run of a stored version that counts in its health only
// (Store.RecordUse with UseInput.HealthOnly); see the fragment.
#include use_health_body
;
