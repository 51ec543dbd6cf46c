// One use of a stored procedure (Store.RecordUse); see the fragment.
#include use_body
;
