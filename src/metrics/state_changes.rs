//! The readiness change stream: every state change the recorder sees, numbered, kept in a bounded
//! history and broadcast to subscribers ([`Metrics::state_changes`](super::Metrics::state_changes)),
//! what the exporter's `GET /events` serves as Server-Sent Events.
//!
//! The log lives beside the status board, under its lock: a change is numbered, remembered and
//! sent in the order the board applied it, and a snapshot of the board names the last change it
//! includes (`last_event_id` of `/status.json`), so "read the snapshot, then follow the stream
//! from that id" misses nothing and repeats nothing.
//!
//! Sending never waits for a subscriber: a `tokio::sync::broadcast` channel keeps the last
//! [`CHANGE_BUFFER`] changes for every subscriber at once, and a subscriber that falls further
//! behind is told so ([`ChangeEvent::Reset`]) instead of slowing the supervisor.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::broadcast;

use crate::state::{Action, State};

/// How many changes the history keeps for resuming (`Last-Event-ID`).
pub const CHANGE_HISTORY: usize = 256;

/// How far behind the live stream one subscriber may fall (changes not yet read) before it is
/// told to start over ([`ChangeEvent::Reset`]); the exporter then drops the client.
pub const CHANGE_BUFFER: usize = 256;

/// One readiness change: `server` moved `from` one state `to` another at `at_unix`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StateChange {
    /// The change's number: 1 for the recorder's first, one more for each next.
    pub id: u64,
    /// The server's name.
    pub server: Arc<str>,
    /// The state it left.
    pub from: State,
    /// The state it entered.
    pub to: State,
    /// Why, in words, when the supervisor said.
    pub reason: Option<Arc<str>>,
    /// When, in Unix seconds (the recorder's clock).
    pub at_unix: f64,
}

impl StateChange {
    /// What a person should do about the new state; `None` once `ready`.
    pub fn action(&self) -> Option<Action> {
        self.to.action()
    }
}

/// What a subscriber of [`Metrics::state_changes`](super::Metrics::state_changes) reads next.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ChangeEvent {
    /// One readiness change.
    Changed(StateChange),
    /// Changes were missed (the subscriber resumed from a change the history no longer holds, or
    /// fell more than [`CHANGE_BUFFER`] changes behind): read the current states again (the
    /// status page, `/status.json`), then go on with the changes that follow.
    Reset,
}

/// The numbered history and the broadcast of changes; kept inside the status board's lock.
#[derive(Debug)]
pub(crate) struct ChangeLog {
    last_id: u64,
    history: VecDeque<StateChange>,
    sender: broadcast::Sender<StateChange>,
}

impl Default for ChangeLog {
    fn default() -> Self {
        ChangeLog {
            last_id: 0,
            history: VecDeque::with_capacity(CHANGE_HISTORY),
            sender: broadcast::Sender::new(CHANGE_BUFFER),
        }
    }
}

impl ChangeLog {
    /// Numbers, remembers and sends one change. Never waits: a subscriber that is behind is
    /// overtaken, not waited for.
    pub(crate) fn record(
        &mut self,
        server: &Arc<str>,
        from: State,
        to: State,
        reason: Option<Arc<str>>,
        at_unix: f64,
    ) {
        self.last_id += 1;
        let change = StateChange {
            id: self.last_id,
            server: server.clone(),
            from,
            to,
            reason,
            at_unix,
        };
        if self.history.len() == CHANGE_HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(change.clone());
        // No subscriber is not an error: the change is in the history.
        let _ = self.sender.send(change);
    }

    /// The id of the last change recorded (0 before the first).
    pub(crate) fn last_id(&self) -> u64 {
        self.last_id
    }

    /// A subscriber from now on, or, with `after`, first the remembered changes after that id
    /// (or a [`ChangeEvent::Reset`] when the history no longer reaches back to it, or it names a
    /// change this recorder never made: another process's, before a restart).
    pub(crate) fn subscribe(&self, after: Option<u64>) -> StateChanges {
        let mut backlog = VecDeque::new();
        if let Some(after) = after {
            let oldest = self.history.front().map_or(self.last_id + 1, |c| c.id);
            if after > self.last_id || after + 1 < oldest {
                backlog.push_back(ChangeEvent::Reset);
            } else {
                backlog.extend(
                    self.history
                        .iter()
                        .filter(|c| c.id > after)
                        .cloned()
                        .map(ChangeEvent::Changed),
                );
            }
        }
        StateChanges {
            backlog,
            receiver: self.sender.subscribe(),
        }
    }

    /// How many subscribers are connected now.
    #[cfg(test)]
    pub(crate) fn subscribers(&self) -> usize {
        self.sender.receiver_count()
    }
}

/// A subscription to the readiness changes (from
/// [`Metrics::state_changes`](super::Metrics::state_changes)): [`StateChanges::next`] gives each
/// change in order. Dropping it unsubscribes.
#[derive(Debug)]
pub struct StateChanges {
    backlog: VecDeque<ChangeEvent>,
    receiver: broadcast::Receiver<StateChange>,
}

impl StateChanges {
    /// The next change, waiting for it; a [`ChangeEvent::Reset`] when changes were missed (then
    /// the changes after the missed ones); `None` once the recorder is gone.
    pub async fn next(&mut self) -> Option<ChangeEvent> {
        if let Some(event) = self.backlog.pop_front() {
            return Some(event);
        }
        match self.receiver.recv().await {
            Ok(change) => Some(ChangeEvent::Changed(change)),
            Err(broadcast::error::RecvError::Lagged(_)) => Some(ChangeEvent::Reset),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }

    /// The next change if one is waiting, without waiting (`None` when none is).
    pub fn try_next(&mut self) -> Option<ChangeEvent> {
        if let Some(event) = self.backlog.pop_front() {
            return Some(event);
        }
        match self.receiver.try_recv() {
            Ok(change) => Some(ChangeEvent::Changed(change)),
            Err(broadcast::error::TryRecvError::Lagged(_)) => Some(ChangeEvent::Reset),
            Err(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_with(n: u64) -> ChangeLog {
        let mut log = ChangeLog::default();
        let server: Arc<str> = Arc::from("files");
        for i in 0..n {
            let (from, to) = if i % 2 == 0 {
                (State::Connecting, State::Ready)
            } else {
                (State::Ready, State::Connecting)
            };
            log.record(&server, from, to, None, i as f64);
        }
        log
    }

    fn ids(changes: &mut StateChanges) -> Vec<Option<u64>> {
        std::iter::from_fn(|| changes.try_next())
            .map(|e| match e {
                ChangeEvent::Changed(c) => Some(c.id),
                ChangeEvent::Reset => None,
            })
            .collect()
    }

    #[test]
    fn a_resume_replays_the_changes_after_the_id_it_names() {
        let log = log_with(5);
        assert_eq!(
            ids(&mut log.subscribe(Some(2))),
            [Some(3), Some(4), Some(5)]
        );
        assert_eq!(ids(&mut log.subscribe(Some(5))), []);
        assert_eq!(ids(&mut log.subscribe(Some(0))).len(), 5);
        assert_eq!(ids(&mut log.subscribe(None)), []);
    }

    #[test]
    fn a_resume_from_beyond_the_history_or_from_an_unknown_id_is_one_reset() {
        let log = log_with(CHANGE_HISTORY as u64 + 10);
        assert_eq!(ids(&mut log.subscribe(Some(3))), [None]);
        // The oldest kept is 11: resuming after 10 loses nothing.
        assert_eq!(
            ids(&mut log.subscribe(Some(10))).len(),
            CHANGE_HISTORY,
            "the whole history"
        );
        assert_eq!(ids(&mut log.subscribe(Some(10_000))), [None], "a restart");
    }

    #[test]
    fn a_subscriber_that_falls_behind_the_buffer_reads_one_reset_and_never_holds_the_sender() {
        let mut log = ChangeLog::default();
        let mut slow = log.subscribe(None);
        let server: Arc<str> = Arc::from("flappy");
        for i in 0..(CHANGE_BUFFER as u64 * 4) {
            log.record(&server, State::Ready, State::Connecting, None, i as f64);
        }
        let read = ids(&mut slow);
        assert_eq!(read[0], None, "told it missed changes first");
        assert_eq!(read.iter().filter(|i| i.is_none()).count(), 1);
        assert_eq!(read.len(), CHANGE_BUFFER + 1, "then the last buffered ones");
        assert_eq!(read.last(), Some(&Some(CHANGE_BUFFER as u64 * 4)));
    }
}
