//! The hub room: the [`Hub`](crate::supervise::Hub) and what it owns across servers.
//!
//! - `registry.rs`: the `Hub` itself: its servers by name (add, remove, replace), routing a call
//!   to its server (also as a `tower::Service`), status, budgets and shutdown;
//! - `shared.rs`: what every supervisor of one hub shares (options, sinks, the change feed, the
//!   secrets to redact), and the queue that delivers events after a lock is released;
//! - `options.rs`: [`HubOptions`](crate::supervise::HubOptions) and its builder;
//! - `factory.rs`: the connector for a configured server ([`connector_for`](crate::supervise::connector_for));
//! - `attach.rs`: connections the hub did not make (`attach`, `add_connector`, `peer`);
//! - `fan_out.rs`: many calls at once, failures isolated;
//! - `inventory_view.rs`: the `Inventory` view of a hub.

pub(super) mod attach;
pub(super) mod factory;
pub(super) mod fan_out;
pub(super) mod inventory_view;
pub(super) mod options;
pub(super) mod registry;
pub(super) mod shared;
#[cfg(test)]
mod tests;
