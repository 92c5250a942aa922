//! Ending a wait from another thread (a signal handler's).

use std::sync::Arc;

use tokio::sync::watch;

/// Wakes a waiting `acquire` when a signal asks redlock to stop. Cheap to clone; `cancel` may
/// be called from any thread, including a signal-handling one.
#[derive(Clone)]
pub struct Cancel {
    sender: Arc<watch::Sender<bool>>,
}

impl Default for Cancel {
    fn default() -> Self {
        Cancel {
            sender: Arc::new(watch::Sender::new(false)),
        }
    }
}

impl Cancel {
    pub fn cancel(&self) {
        self.sender.send_replace(true);
    }

    pub fn is_cancelled(&self) -> bool {
        *self.sender.borrow()
    }

    pub(in crate::lock) async fn cancelled(&self) {
        let mut receiver = self.sender.subscribe();
        // The sender lives in self, so the channel cannot close while we wait.
        let _ = receiver.wait_for(|cancelled| *cancelled).await;
    }
}
