//! MongoDB extended JSON (what `mongoexport` writes) made plain, for `histsim project`:
//! `$oid`, `$numberLong`, `$numberInt`, `$numberDouble` and `$date` wrappers become the plain
//! values the row fields expect.

use serde_json::{Map, Value};

/// The value with MongoDB extended JSON wrappers replaced by plain values.
pub(super) fn plain(value: Value) -> Result<Value, String> {
    match value {
        Value::Array(items) => items
            .into_iter()
            .map(plain)
            .collect::<Result<_, _>>()
            .map(Value::Array),
        Value::Object(map) => {
            if map.len() == 1 {
                let (key, inner) = map.iter().next().expect("one entry");
                if let Some(converted) = wrapper(key, inner) {
                    return converted;
                }
            }
            map.into_iter()
                .map(|(k, v)| plain(v).map(|v| (k, v)))
                .collect::<Result<Map<_, _>, _>>()
                .map(Value::Object)
        }
        other => Ok(other),
    }
}

/// The plain value of a one-key `$` object; `None` when the key is not one this command knows.
fn wrapper(key: &str, inner: &Value) -> Option<Result<Value, String>> {
    let bad =
        || -> Result<Value, String> { Err(format!("`{key}` holds a value of the wrong type")) };
    let converted = match (key, inner) {
        ("$oid", Value::String(s)) => Ok(Value::String(s.clone())),
        ("$numberLong" | "$numberInt", Value::String(s)) => s
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("`{key}` is not a decimal integer")),
        ("$numberDouble", Value::String(s)) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("`{key}` is not a finite number")),
        ("$date", Value::String(_) | Value::Number(_)) => Ok(inner.clone()),
        ("$date", Value::Object(_)) => match plain(inner.clone()) {
            Ok(Value::Number(n)) => Ok(Value::Number(n)),
            _ => bad(),
        },
        ("$oid" | "$numberLong" | "$numberInt" | "$numberDouble" | "$date", _) => bad(),
        _ => return None,
    };
    Some(converted)
}
