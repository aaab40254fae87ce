//! [`EventQueue`]: the one ordered delivery of [`ConnectionEvent`]s to the [`EventSink`]s, shared by
//! the supervisors of a hub and used by [`Peers`](crate::supervise::Peers).

use crate::util::MutexExt as _;
use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::resolve::ChangeFeed;
use crate::state::{ConnectResult, ConnectionEvent, EventSink};

/// The ordered event queue of one set of machines (one hub's supervisors, or one `Peers`): the
/// sinks, the change feed they move, and the events not delivered yet.
///
/// The contract, for every machine that uses it:
///
/// 1. a machine changes under its own lock and collects the events its transitions cause
///    ([`Transitions`](super::Transitions));
/// 2. it [`queue`](EventQueue::queue)s them while still holding that lock, so events of one
///    server enter the queue in the order its transitions happened (an attempt that fails at once
///    never reports `connecting -> absent` before the `absent -> connecting` that started it);
/// 3. it releases the lock and [`flush`](EventQueue::flush)es: no sink ever runs under a machine's
///    lock, one thread delivers at a time so sinks see one ordered stream, and events a sink causes
///    re-entrantly are delivered by the loop already running.
pub(crate) struct EventQueue {
    sinks: Vec<Arc<dyn EventSink>>,
    feed: ChangeFeed,
    /// Events not yet delivered, in the order their transitions happened.
    pending: Mutex<VecDeque<ConnectionEvent>>,
    /// Held while delivering, so sinks see one ordered stream.
    delivering: Mutex<()>,
}

thread_local! {
    /// Whether this thread is inside `flush` (a sink that causes events re-entrantly).
    static DELIVERING: Cell<bool> = const { Cell::new(false) };
}

impl EventQueue {
    /// A queue delivering to `sinks` (none: events only move the change feed).
    pub(crate) fn new(sinks: Vec<Arc<dyn EventSink>>) -> Self {
        EventQueue {
            sinks,
            feed: ChangeFeed::new(),
            pending: Mutex::new(VecDeque::new()),
            delivering: Mutex::new(()),
        }
    }

    /// The change feed: moves after every delivery that changes what an inventory snapshot says.
    pub(crate) fn feed(&self) -> &ChangeFeed {
        &self.feed
    }

    /// Queues `events` and delivers them (see [`EventQueue::flush`]): for events that no lock
    /// orders (a server added or removed, a credential's expiry).
    pub(crate) fn emit(&self, events: Vec<ConnectionEvent>) {
        self.queue(events);
        self.flush();
    }

    /// Queues `events` for delivery. Call it while still holding the lock under which their
    /// transitions were made, then [`EventQueue::flush`] after releasing it.
    pub(crate) fn queue(&self, events: Vec<ConnectionEvent>) {
        if !events.is_empty() {
            self.pending.lock_unpoisoned().extend(events);
        }
    }

    /// Sends the queued events to every sink, in order, outside any machine's lock, and bumps the
    /// change feed when one of them changes what an inventory snapshot would say. One thread
    /// delivers at a time; events a sink causes re-entrantly are delivered by the same loop.
    pub(crate) fn flush(&self) {
        if DELIVERING.with(Cell::get) {
            return;
        }
        let _turn = self.delivering.lock_unpoisoned();
        /// Clears the flag even when a sink panics.
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                DELIVERING.with(|d| d.set(false));
            }
        }
        DELIVERING.with(|d| d.set(true));
        let reset = Reset;
        let mut changed = false;
        loop {
            let next = self.pending.lock_unpoisoned().pop_front();
            let Some(event) = next else { break };
            changed |= moves_inventory(&event);
            for sink in &self.sinks {
                sink.on_event(&event);
            }
        }
        drop(reset);
        if changed {
            self.feed.bump();
        }
    }
}

/// Whether `event` can change what an inventory snapshot says, so the change feed must move: a
/// readiness state, a tool list, membership, or the reason a connect failed (a failure that leaves
/// the state as it was still changes the reason a `NotReady` gives).
fn moves_inventory(event: &ConnectionEvent) -> bool {
    match event {
        ConnectionEvent::StateChanged { .. }
        | ConnectionEvent::ReasonChanged { .. }
        | ConnectionEvent::ToolsChanged { .. }
        | ConnectionEvent::ServerAdded { .. }
        | ConnectionEvent::ServerRemoved { .. } => true,
        ConnectionEvent::ConnectAttempt { result, .. } => *result != ConnectResult::Ok,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::EventQueue;
    use crate::state::{ConnectionEvent, EventSink, State};

    fn added(server: &str) -> ConnectionEvent {
        ConnectionEvent::ServerAdded {
            server: server.into(),
            state: State::Connecting,
        }
    }

    #[test]
    fn events_queued_in_order_reach_every_sink_in_that_order_and_move_the_feed_once() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink: Arc<dyn EventSink> = {
            let seen = seen.clone();
            Arc::new(move |e: &ConnectionEvent| seen.lock().unwrap().push(e.server().to_owned()))
        };
        let queue = EventQueue::new(vec![sink.clone(), sink]);
        queue.queue(vec![added("a"), added("b")]);
        queue.queue(vec![added("c")]);
        assert!(
            seen.lock().unwrap().is_empty(),
            "nothing delivered before the flush"
        );
        queue.flush();
        assert_eq!(*seen.lock().unwrap(), ["a", "a", "b", "b", "c", "c"]);
        assert_eq!(queue.feed().generation(), 1);
    }

    #[test]
    fn events_a_sink_causes_are_delivered_after_the_one_it_is_handling() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let queue = Arc::new_cyclic(|weak: &std::sync::Weak<EventQueue>| {
            let weak = weak.clone();
            let seen = seen.clone();
            let sink = move |e: &ConnectionEvent| {
                seen.lock().unwrap().push(e.server().to_owned());
                if e.server() == "first"
                    && let Some(queue) = weak.upgrade()
                {
                    queue.emit(vec![added("caused")]);
                }
            };
            EventQueue::new(vec![Arc::new(sink)])
        });
        queue.emit(vec![added("first"), added("second")]);
        assert_eq!(*seen.lock().unwrap(), ["first", "second", "caused"]);
    }

    #[test]
    fn an_event_that_changes_no_snapshot_does_not_move_the_feed() {
        let queue = EventQueue::new(Vec::new());
        queue.emit(vec![ConnectionEvent::Reconnected { server: "a".into() }]);
        assert_eq!(queue.feed().generation(), 0);
    }
}
