//! ASKING and the request it is for, queued as one (for a Redis Cluster's slot migration, see
//! `cluster`).
//!
//! While a slot moves, the node that imports it serves a request for the slot only when the
//! same connection sent ASKING just before: a one-shot flag that the server clears after the
//! next command, whatever that command is. So the two must be adjacent on the wire. Queued
//! as two requests, another thread's request on the same kept connection could land between
//! them, take the flag, and be run by a node that does not own its slot yet. Here both are
//! appended to the outgoing buffer, and both answer slots taken, under one hold of the pipe's
//! lock; everything else about them (order, never withdrawn, answers read and dropped when
//! nobody waits) is that of any two requests.

use std::time::Instant;

use super::super::resp::{self, Reply};
use super::{Answer, Pipe, Request};

impl Pipe {
    /// `ASKING`, then the request that `encode` writes, both queued on the first poll. The
    /// answer is the request's, or ASKING's refusal (an ACL user without ASKING), or why the
    /// connection broke.
    pub async fn asking<E: FnOnce(&mut Vec<u8>)>(&self, encode: E) -> Answer {
        let (asking, request) = {
            let mut state = self.lock();
            if let Some(why) = &state.broken {
                return Err(why.clone());
            }
            if state.is_flushed() {
                // A backlog starts now: the stall clock counts from here.
                state.moved_at = Instant::now();
            }
            let number = state.enqueue(|out| resp::encode(out, 1, [b"ASKING".as_slice()]));
            state.enqueue(encode);
            (self.queued(number), self.queued(number + 1))
        };
        match futures_util::future::join(asking, request).await {
            (Ok(Reply::Error(refused)), _) => Ok(Reply::Error(refused)),
            (Err(broken), _) => Err(broken),
            (Ok(_), answer) => answer,
        }
    }

    /// The request whose answer slot `number` was taken by the caller.
    fn queued(&self, number: u64) -> Request<'_, fn(&mut Vec<u8>)> {
        Request {
            pipe: self,
            encode: None,
            number: Some(number),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{poll_once, runtime};
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn asking_and_its_request_go_out_together_and_answer_as_one() {
        runtime().block_on(async {
            let (ours, mut server) = tokio::io::duplex(64 * 1024);
            let pipe = Pipe::new(Box::new(ours));
            let get = |out: &mut Vec<u8>| resp::encode(out, 2, [b"GET".as_slice(), b"k"]);
            let mut asked = Box::pin(pipe.asking(get));
            // A request made after it, even before its first poll, goes behind both.
            let mut later = Box::pin(pipe.request(|out: &mut Vec<u8>| {
                resp::encode(out, 1, [b"PING".as_slice()]);
            }));
            assert!(poll_once(asked.as_mut()).await.is_pending());
            assert!(poll_once(later.as_mut()).await.is_pending());
            let mut sent = vec![0u8; 128];
            let n = server.read(&mut sent).await.expect("read");
            assert_eq!(
                &sent[..n],
                b"*1\r\n$6\r\nASKING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n"
            );
            server
                .write_all(b"+OK\r\n$1\r\nv\r\n+PONG\r\n")
                .await
                .expect("write");
            assert_eq!(asked.await, Ok(Reply::Bulk(b"v".to_vec())));
            assert_eq!(later.await, Ok(Reply::Simple("PONG".into())));
        });
    }

    #[test]
    fn a_refused_asking_is_the_answer() {
        runtime().block_on(async {
            let (ours, mut server) = tokio::io::duplex(64 * 1024);
            let pipe = Pipe::new(Box::new(ours));
            let get = |out: &mut Vec<u8>| resp::encode(out, 2, [b"GET".as_slice(), b"k"]);
            let asked = pipe.asking(get);
            server
                .write_all(b"-NOPERM no ASKING\r\n-ASK 1 h:1\r\n")
                .await
                .expect("write");
            assert_eq!(asked.await, Ok(Reply::Error("NOPERM no ASKING".into())));
            // Both answers were taken: the pipe is in step for the next request.
            let ping = pipe.request(|out: &mut Vec<u8>| {
                resp::encode(out, 1, [b"PING".as_slice()]);
            });
            server.write_all(b"+PONG\r\n").await.expect("write");
            assert_eq!(ping.await, Ok(Reply::Simple("PONG".into())));
        });
    }
}
