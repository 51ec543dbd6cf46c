package sandbox

// EncodeJSON is the encoding a run's values cross the worker boundary in:
// x (JSON-safe, Normalize's set) as compact JSON, object keys sorted, a
// float always written with a fraction or an exponent ("2.0", not "2"),
// so that jsonvalue.Decode gives back the very values a program got: 2.0
// a float64, 2 an int64. What a resume answers a recorded call with
// (replay's review at the call) is kept in it.
func EncodeJSON(x any) ([]byte, error) { return appendJSON(nil, x) }
