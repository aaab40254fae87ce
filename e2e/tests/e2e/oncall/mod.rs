//! The on-call room: what alerts/, dashboards/ and mixin/ tell on-call, checked against what the
//! exporter really serves. [`dashboards`] lints the dashboards and rules offline and checks every
//! name they use is served; [`prometheus`] runs them on a live Prometheus and Alertmanager;
//! [`truth`] checks what `serve` tells on-call with real processes.

mod dashboards;
mod prometheus;
mod truth;
