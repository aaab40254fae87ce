//! Helpers of the library's own tests (hermetic: loopback only).
#![allow(dead_code)]

pub mod events;
pub mod exposition;
pub mod otlp;
