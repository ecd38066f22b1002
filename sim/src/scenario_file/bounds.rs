//! The bounds a scenario file's numbers must keep, checked with the error every workload's
//! `validate` words the same way: the field's path first, the bounds, what the file holds.

use std::fmt::Display;
use std::ops::RangeInclusive;

/// `Ok` when `value` of field `field` lies in `bounds`, else `{field}: expected {lo} to {hi},
/// found {value}`.
pub fn within<T: PartialOrd + Display>(
    field: &str,
    value: T,
    bounds: RangeInclusive<T>,
) -> Result<(), String> {
    if bounds.contains(&value) {
        return Ok(());
    }
    let (lo, hi) = bounds.into_inner();
    Err(format!("{field}: expected {lo} to {hi}, found {value}"))
}

/// `Ok` when list field `field` holds 1 to `max` entries, else `{field}: expected 1 to {max}
/// {field}, found {len}`.
pub fn entries_within(field: &str, len: usize, max: usize) -> Result<(), String> {
    if (1..=max).contains(&len) {
        return Ok(());
    }
    Err(format!("{field}: expected 1 to {max} {field}, found {len}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_out_of_its_bounds_is_named_with_them() {
        assert_eq!(within("replicas", 3u8, 1..=5), Ok(()));
        assert_eq!(
            within("history.text_bytes_max", 8u32, 16..=65_536),
            Err("history.text_bytes_max: expected 16 to 65536, found 8".to_string())
        );
        assert_eq!(entries_within("steps", 4, 4), Ok(()));
        assert_eq!(
            entries_within("steps", 0, 4),
            Err("steps: expected 1 to 4 steps, found 0".to_string())
        );
    }
}
