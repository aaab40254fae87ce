//! The budget refuses a zero wait, a poll interval shorter than 1 ms or longer than the wait,
//! naming the values.

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
    // A poll of nanoseconds only burns CPU (a change wakes a waiting resolution anyway).
    let spin = Budget::try_new(Duration::from_secs(2), Duration::from_nanos(1)).unwrap_err();
    assert_eq!(
        spin.to_string(),
        "poll interval 1ns is shorter than 1ms: a waiting resolution wakes at once on a change, \
         so a shorter poll only costs CPU; use e.g. 500ms"
    );
    assert!(Budget::try_new(Duration::from_secs(2), Budget::MIN_POLL).is_ok());
    let default = Budget::default();
    assert_eq!(
        (default.wait(), default.poll()),
        (Duration::from_secs(20), Duration::from_secs(2))
    );
}
