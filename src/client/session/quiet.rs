//! [`Quiet`]: the client transport of every rmcp connection, minus the notifications the
//! supervisor has no use for. rmcp starts one task per notification it receives; a server that
//! floods `notifications/message` (logging), resource or prompt notifications would otherwise
//! cost a task each, and many such servers at once an unbounded queue of them. These are dropped
//! here, before rmcp sees them (a notification that answers a `subscriptions/listen` request is
//! kept, whatever its kind). `tools/list_changed` passes and is coalesced by the supervisor
//! (one refresh at a time per connection); progress and cancellation pass as they are.

use std::borrow::Cow;
use std::future::Future;

use rmcp::model::{GetMeta as _, JsonRpcMessage, JsonRpcNotification, ServerNotification};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// A client transport that drops the notifications the supervisor ignores.
pub(crate) struct Quiet<T> {
    inner: T,
    server: std::sync::Arc<str>,
    dropped: u64,
}

impl<T> Quiet<T> {
    pub(crate) fn new(inner: T, server: std::sync::Arc<str>) -> Self {
        Quiet {
            inner,
            server,
            dropped: 0,
        }
    }
}

/// Whether `message` is a notification nothing here acts on.
fn ignored(message: &RxJsonRpcMessage<RoleClient>) -> bool {
    let JsonRpcMessage::Notification(JsonRpcNotification { notification, .. }) = message else {
        return false;
    };
    let unused = matches!(
        notification,
        ServerNotification::LoggingMessageNotification(_)
            | ServerNotification::ResourceUpdatedNotification(_)
            | ServerNotification::ResourceListChangedNotification(_)
            | ServerNotification::PromptListChangedNotification(_)
    );
    unused && notification.get_meta().subscription_id().is_none()
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Quiet<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            if !ignored(&message) {
                return Some(message);
            }
            self.dropped += 1;
            if self.dropped.is_power_of_two() && self.dropped >= 1024 {
                tracing::debug!(
                    target: "mcp_readiness::supervise",
                    server = %self.server,
                    dropped = self.dropped,
                    "server `{}` keeps sending notifications nothing here uses; dropped {} so far",
                    self.server,
                    self.dropped
                );
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
