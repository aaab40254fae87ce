//! The budget refuses a zero wait and a poll interval longer than the wait, naming both values.

use super::*;

#[test]
fn budget_refuses_zero_and_inverted_polls_naming_both_values() {
    let zero = Budget::try_new(Duration::from_secs(20), Duration::ZERO).unwrap_err();
    assert_eq!(
        zero.to_string(),
        "poll interval must be greater than zero (wait budget 20s): use e.g. 2s"
    );
    let inverted = Budget::try_new(Duration::from_secs(1), Duration::from_secs(2)).unwrap_err();
    assert!(inverted.to_string().contains("2s") && inverted.to_string().contains("1s"));
    assert!(Budget::try_new(Duration::ZERO, Duration::from_secs(1)).is_err());
    assert!(Budget::try_new(Duration::from_secs(2), Duration::from_secs(2)).is_ok());
    let default = Budget::default();
    assert_eq!(
        (default.wait(), default.poll()),
        (Duration::from_secs(20), Duration::from_secs(2))
    );
}
