//! Helpers of the library's own tests (hermetic: loopback only).
#![allow(dead_code)]

pub mod otlp;
