//! Subscribing to release notices (see `notices`): on the kept connection where the master
//! speaks RESP3 ([`Node::listen`]), else on a connection of its own ([`Node::subscribe`]).

use std::sync::atomic::{AtomicBool, Ordering};

use super::super::pipe::Pipe;
use super::super::resp::{self, Reply};
use super::super::subscription::{Kept, Subscription};
use super::{Node, NodeError, failed};

impl Node {
    /// A subscription to `channel`, for a waiter's release notices: on the kept connection
    /// where the master speaks RESP3, so that notices cost the master no connection of their
    /// own (the waiter keeps that one open anyway, for its turns and heartbeats); else, or when
    /// the kept connection carries a subscription already, on a connection of its own
    /// ([`Node::subscribe`]). Either way the confirmation is awaited: no message published
    /// after this returns is missed. `HELLO 3` is sent only here, once per connection: a
    /// process that never waits speaks RESP2 and pays nothing for it. Deadlines are the
    /// caller's.
    pub async fn listen(&self, channel: &str, sharded: bool) -> Result<Subscription, NodeError> {
        if !self.speaks_resp2_only.load(Ordering::SeqCst)
            && let Some(kept) = Box::pin(self.listen_on_kept(channel, sharded)).await?
        {
            return Ok(Subscription::Kept(kept));
        }
        Ok(Subscription::Own(Box::new(
            self.subscribe(channel, sharded).await?,
        )))
    }

    /// [`Node::listen`] on the kept connection; `None` when it cannot carry the subscription
    /// (the master refused `HELLO 3`, or the connection carries one already).
    async fn listen_on_kept(
        &self,
        channel: &str,
        sharded: bool,
    ) -> Result<Option<Kept>, NodeError> {
        let (connection, _) = self.connection().await?;
        if !connection.resp3.load(Ordering::SeqCst) {
            let hello = |out: &mut Vec<u8>| resp::encode(out, 2, [b"HELLO".as_slice(), b"3"]);
            match connection.send(hello, false).await {
                // Any refusal: RESP3 unknown (Redis 5: "unknown command"), or not allowed.
                Ok(Reply::Error(refused)) => {
                    log::debug!(
                        "{} refused HELLO 3 ({refused}): release notices on a connection of \
                         their own",
                        self.master
                    );
                    self.speaks_resp2_only.store(true, Ordering::SeqCst);
                    return Ok(None);
                }
                Ok(Reply::Array(_)) => connection.resp3.store(true, Ordering::SeqCst),
                Ok(other) => {
                    return Err(NodeError::BadReply(format!(
                        "unexpected answer to HELLO: {other}"
                    )));
                }
                Err(broken) => {
                    self.drop_broken(&connection);
                    return Err(self.named_tls(&connection.pipe, failed(broken)).await);
                }
            }
        }
        if connection.subscribed.swap(true, Ordering::SeqCst) {
            return Ok(None);
        }
        let (verb, confirmed, unsubscribe): (&[u8], &[u8], &'static [u8]) = if sharded {
            (b"SSUBSCRIBE", b"ssubscribe", b"SUNSUBSCRIBE")
        } else {
            (b"SUBSCRIBE", b"subscribe", b"UNSUBSCRIBE")
        };
        // From here on the subscription ends when `kept` is dropped, confirmed or not: an
        // unconfirmed SUBSCRIBE is followed by its UNSUBSCRIBE.
        let kept = Kept {
            pipe: connection.pipe.clone(),
            taken: connection.subscribed.clone(),
            unsubscribe,
            channel: channel.to_string(),
        };
        connection.pipe.listen();
        let subscribe = |out: &mut Vec<u8>| resp::encode(out, 2, [verb, channel.as_bytes()]);
        match connection.send(subscribe, false).await {
            Ok(Reply::Push(confirmation))
                if confirmation.first().and_then(Reply::bulk) == Some(confirmed) =>
            {
                Ok(Some(kept))
            }
            Ok(Reply::Error(refused)) => Err(self.refused(&refused, None)),
            Ok(other) => Err(NodeError::BadReply(format!(
                "unexpected answer to {}: {other}",
                String::from_utf8_lossy(verb)
            ))),
            Err(broken) => {
                self.drop_broken(&connection);
                Err(failed(broken))
            }
        }
    }

    /// A new connection subscribed to `channel`, for release notices: opened and logged in
    /// like every other, then SUBSCRIBE (SSUBSCRIBE when `sharded`: a cluster's node that owns
    /// the channel's slot), whose confirmation it waits for, so that no message published
    /// after this returns is missed. Deadlines are the caller's.
    pub async fn subscribe(&self, channel: &str, sharded: bool) -> Result<Pipe, NodeError> {
        // A handshake flag of its own: a subscription given up in the middle of its handshake
        // must not make the kept connection's next timeout read as a TLS problem.
        let pipe = self.open(&AtomicBool::new(false)).await?;
        pipe.listen();
        let (verb, confirmed): (&[u8], &[u8]) = if sharded {
            (b"SSUBSCRIBE", b"ssubscribe")
        } else {
            (b"SUBSCRIBE", b"subscribe")
        };
        let answer = pipe
            .request(|out: &mut Vec<u8>| resp::encode(out, 2, [verb, channel.as_bytes()]))
            .await;
        match answer {
            Ok(Reply::Array(confirmation))
                if confirmation.first().and_then(Reply::bulk) == Some(confirmed) =>
            {
                Ok(pipe)
            }
            Ok(Reply::Error(refused)) => Err(self.refused(&refused, None)),
            Ok(other) => Err(NodeError::BadReply(format!(
                "unexpected answer to {}: {other}",
                String::from_utf8_lossy(verb)
            ))),
            Err(broken) => Err(self.named_tls(&pipe, failed(broken)).await),
        }
    }
}
