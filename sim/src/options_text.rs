//! How every workload prints the options a seed derived (VOPR-style): one `name = value` a line,
//! names in alphabetical order, probabilities to two places and `off` when zero.

use std::fmt;

use serde::Serialize;

/// Writes `options` (a struct of named fields) as the lines `histsim replay` and failure reports
/// show.
pub fn write_options(f: &mut fmt::Formatter<'_>, options: &impl Serialize) -> fmt::Result {
    let value = serde_json::to_value(options).map_err(|_| fmt::Error)?;
    let serde_json::Value::Object(map) = value else {
        return Err(fmt::Error);
    };
    for (name, v) in map {
        let shown = match v.as_f64() {
            Some(x) if x == 0.0 && name.ends_with("probability") => "off".to_string(),
            Some(x) if name.ends_with("probability") => format!("{x:.2}"),
            _ => v.to_string(),
        };
        writeln!(f, "  {name} = {shown}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Example {
        zeta_probability: f64,
        alpha_probability: f64,
        replicas: u8,
    }

    impl fmt::Display for Example {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write_options(f, self)
        }
    }

    #[test]
    fn names_sorted_probabilities_rounded_and_zero_is_off() {
        let shown = Example {
            zeta_probability: 0.0,
            alpha_probability: 0.256,
            replicas: 3,
        }
        .to_string();
        assert_eq!(
            shown,
            "  alpha_probability = 0.26\n  replicas = 3\n  zeta_probability = off\n"
        );
    }
}
