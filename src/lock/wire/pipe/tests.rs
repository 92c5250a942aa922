//! Unit tests of `pipe`.

use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub(super) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// Polls `future` once, as a runtime would on its first turn.
pub(super) async fn poll_once<F: Future + Unpin>(future: F) -> Poll<F::Output> {
    let mut future = future;
    std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut future).poll(cx))).await
}

fn ping(out: &mut Vec<u8>) {
    resp::encode(out, 1, [b"PING".as_slice()]);
}

#[test]
fn answers_are_matched_in_order_even_when_a_request_is_dropped() {
    runtime().block_on(async {
        let (ours, mut server) = tokio::io::duplex(64 * 1024);
        let pipe = Pipe::new(Box::new(ours));
        let first = pipe.request(ping);
        let second = pipe.request(|out: &mut Vec<u8>| {
            resp::encode(out, 2, [b"ECHO".as_slice(), b"two"]);
        });
        let mut first = Box::pin(first);
        let mut second = Box::pin(second);
        // Queue both, then drop the first before its answer arrives.
        assert!(poll_once(first.as_mut()).await.is_pending());
        assert!(poll_once(second.as_mut()).await.is_pending());
        drop(first);
        let mut sent = vec![0u8; 64];
        let n = server.read(&mut sent).await.expect("read");
        assert_eq!(
            &sent[..n],
            b"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$3\r\ntwo\r\n"
        );
        assert!(pipe.is_flushed());
        server
            .write_all(b"+PONG\r\n$3\r\ntwo\r\n")
            .await
            .expect("write");
        assert_eq!(
            second.await,
            Ok(Reply::Bulk(b"two".to_vec())),
            "the dropped request's answer must not be handed to the next one"
        );
    });
}

#[test]
fn a_closed_connection_fails_waiting_and_later_requests() {
    runtime().block_on(async {
        let (ours, server) = tokio::io::duplex(1024);
        let pipe = Pipe::new(Box::new(ours));
        let mut waiting = Box::pin(pipe.request(ping));
        assert!(poll_once(waiting.as_mut()).await.is_pending());
        drop(server);
        assert!(waiting.await.is_err());
        assert!(pipe.request(ping).await.is_err());
    });
}

#[test]
fn a_break_says_whether_it_stranded_a_request_that_went_out() {
    runtime().block_on(async {
        // Answered, then closed: the request that fails with the close never went out.
        let (ours, mut server) = tokio::io::duplex(1024);
        let pipe = Pipe::new(Box::new(ours));
        server.write_all(b"+PONG\r\n").await.expect("write");
        assert_eq!(pipe.request(ping).await, Ok(Reply::Simple("PONG".into())));
        drop(server);
        assert!(pipe.request(ping).await.is_err());
        assert!(!pipe.stranded());
        // Written and never answered, even with nobody waiting for it any more: stranded.
        let (ours, server) = tokio::io::duplex(1024);
        let pipe = Pipe::new(Box::new(ours));
        let mut sent = Box::pin(pipe.request(ping));
        assert!(poll_once(sent.as_mut()).await.is_pending());
        drop(sent);
        drop(server);
        assert!(pipe.request(ping).await.is_err());
        assert!(pipe.stranded());
        // A reply cut short: its request ran; the one behind it is stranded.
        let (ours, mut server) = tokio::io::duplex(1024);
        let pipe = Pipe::new(Box::new(ours));
        let mut first = Box::pin(pipe.request(ping));
        assert!(poll_once(first.as_mut()).await.is_pending());
        server.write_all(b"+PO").await.expect("write");
        drop(server);
        assert!(first.await.is_err());
        assert!(!pipe.stranded());
        let (ours, mut server) = tokio::io::duplex(1024);
        let pipe = Pipe::new(Box::new(ours));
        let mut first = Box::pin(pipe.request(ping));
        let mut second = Box::pin(pipe.request(ping));
        assert!(poll_once(first.as_mut()).await.is_pending());
        assert!(poll_once(second.as_mut()).await.is_pending());
        server.write_all(b"+PO").await.expect("write");
        drop(server);
        assert!(first.await.is_err() && second.await.is_err());
        assert!(pipe.stranded());
    });
}

#[test]
fn an_answer_nobody_asked_for_breaks_the_pipe() {
    runtime().block_on(async {
        let (ours, mut server) = tokio::io::duplex(1024);
        let pipe = Pipe::new(Box::new(ours));
        server
            .write_all(b"+PONG\r\n+PONG\r\n")
            .await
            .expect("write");
        // The first PONG answers this request; the second answers nothing.
        let answer = pipe.request(ping).await;
        assert_eq!(answer, Ok(Reply::Simple("PONG".into())));
        let later = pipe.request(ping).await;
        assert!(later.is_err(), "{later:?}");
    });
}

#[test]
fn an_answer_followed_by_close_is_delivered() {
    runtime().block_on(async {
        let (ours, mut server) = tokio::io::duplex(1024);
        let pipe = Pipe::new(Box::new(ours));
        let mut request = Box::pin(pipe.request(ping));
        assert!(poll_once(request.as_mut()).await.is_pending());
        // The master answers, then closes (shutdown, CLIENT KILL, restart).
        server.write_all(b":1\r\n").await.expect("write");
        drop(server);
        assert_eq!(request.await, Ok(Reply::Int(1)));
        assert!(pipe.is_broken());
    });
}

#[test]
fn why_a_master_refused_us_is_kept() {
    runtime().block_on(async {
        let (ours, mut server) = tokio::io::duplex(1024);
        let pipe = Pipe::new(Box::new(ours));
        server
            .write_all(b"-ERR max number of clients reached\r\n")
            .await
            .expect("write");
        drop(server);
        let answer = pipe.request(ping).await;
        assert!(matches!(answer, Ok(Reply::Error(_))), "{answer:?}");
    });
}

#[test]
fn an_oversized_reply_breaks_the_pipe_and_closes_the_connection() {
    runtime().block_on(async {
        let (ours, mut server) = tokio::io::duplex(64 * 1024);
        let pipe = Pipe::new(Box::new(ours));
        // An answer, then the header of a huge string and bytes without end: the writer
        // keeps going for as long as the pipe reads.
        let writer = tokio::spawn(async move {
            let filler = vec![b'x'; 64 * 1024];
            let stream = async {
                server.write_all(b":1\r\n$999999999999\r\n").await?;
                loop {
                    server.write_all(&filler).await?;
                }
            };
            let _: std::io::Result<()> = stream.await;
            server
        });
        let first = Box::pin(pipe.request(ping));
        let second = Box::pin(pipe.request(ping));
        let (first, second) = futures_util::future::join(first, second).await;
        assert_eq!(
            first,
            Ok(Reply::Int(1)),
            "the answer before it is delivered"
        );
        assert_eq!(
            second,
            Err(Broken::BadReply("reply larger than 1048576 bytes".into()))
        );
        assert!(pipe.is_broken());
        assert_eq!(
            pipe.request(ping).await,
            Err(Broken::BadReply("reply larger than 1048576 bytes".into()))
        );
        // The connection was closed: the writer stopped, and the other end reads to its end
        // (our two requests).
        let mut server = writer.await.expect("writer");
        let mut sent = Vec::new();
        server.read_to_end(&mut sent).await.expect("read");
        assert_eq!(sent, b"*1\r\n$4\r\nPING\r\n".repeat(2));
        let state = pipe.lock();
        assert!(state.stream.is_none() && state.inbox.capacity() == 0);
    });
}

#[test]
fn a_connection_closed_mid_reply_says_so() {
    runtime().block_on(async {
        let (ours, mut server) = tokio::io::duplex(1024);
        let pipe = Pipe::new(Box::new(ours));
        let mut request = Box::pin(pipe.request(ping));
        assert!(poll_once(request.as_mut()).await.is_pending());
        server.write_all(b"$5\r\nhel").await.expect("write");
        drop(server);
        assert_eq!(
            request.await,
            Err(Broken::Io(
                "the master closed the connection in the middle of a reply".into()
            ))
        );
    });
}

/// A pub/sub message on channel `c`, as Redis sends it.
const MESSAGE: &[u8] = b"*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$0\r\n\r\n";

fn subscribe(out: &mut Vec<u8>) {
    resp::encode(out, 2, [b"SUBSCRIBE".as_slice(), b"c"]);
}

/// Polls the pipe's listener once.
async fn poll_push_once(pipe: &Pipe) -> Poll<Result<(), Broken>> {
    std::future::poll_fn(|cx| Poll::Ready(pipe.poll_push(cx))).await
}

#[test]
fn pushes_after_the_subscription_coalesce_into_one_wake_up() {
    runtime().block_on(async {
        let (ours, mut server) = tokio::io::duplex(64 * 1024);
        let pipe = Pipe::new(Box::new(ours));
        pipe.listen();
        // The confirmation is the SUBSCRIBE's answer; a message in the same read is a push.
        let mut confirmed = b"*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n".to_vec();
        confirmed.extend_from_slice(MESSAGE);
        server.write_all(&confirmed).await.expect("write");
        let answer = pipe.request(subscribe).await.expect("confirmed");
        let bulk = |s: &str| Reply::Bulk(s.as_bytes().to_vec());
        let confirmation = Reply::Array(vec![bulk("subscribe"), bulk("c"), Reply::Int(1)]);
        assert_eq!(answer, confirmation);
        assert_eq!(poll_push_once(&pipe).await, Poll::Ready(Ok(())));
        assert_eq!(
            poll_push_once(&pipe).await,
            Poll::Pending,
            "one wake-up per look"
        );
        // A thousand messages between two looks: one wake-up, and nothing kept.
        server
            .write_all(&MESSAGE.repeat(1000))
            .await
            .expect("write");
        assert_eq!(poll_push_once(&pipe).await, Poll::Ready(Ok(())));
        assert_eq!(poll_push_once(&pipe).await, Poll::Pending);
        {
            let state = pipe.lock();
            assert!(state.inbox.is_empty() && state.slots.is_empty());
        }
        // Waiting for one wakes up when it comes.
        let waiting = std::future::poll_fn(|cx| pipe.poll_push(cx));
        let (woken, _) = futures_util::future::join(waiting, async {
            tokio::task::yield_now().await;
            server.write_all(MESSAGE).await.expect("write");
        })
        .await;
        assert_eq!(woken, Ok(()));
        // A message that arrived before the connection closed is reported, then the end.
        server.write_all(MESSAGE).await.expect("write");
        drop(server);
        assert_eq!(poll_push_once(&pipe).await, Poll::Ready(Ok(())));
        assert!(matches!(
            poll_push_once(&pipe).await,
            Poll::Ready(Err(Broken::Io(_)))
        ));
    });
}

#[test]
fn a_push_is_a_protocol_error_unless_the_pipe_listens_and_it_is_a_message() {
    runtime().block_on(async {
        // Not listening: a message answers no request.
        let (ours, mut server) = tokio::io::duplex(1024);
        let pipe = Pipe::new(Box::new(ours));
        server.write_all(b":1\r\n").await.expect("write");
        server.write_all(MESSAGE).await.expect("write");
        assert_eq!(pipe.request(ping).await, Ok(Reply::Int(1)));
        assert!(pipe.request(ping).await.is_err());
        // Listening: anything but a message breaks the pipe.
        let (ours, mut server) = tokio::io::duplex(1024);
        let pipe = Pipe::new(Box::new(ours));
        pipe.listen();
        server.write_all(b"+PONG\r\n").await.expect("write");
        assert_eq!(
            poll_push_once(&pipe).await,
            Poll::Ready(Err(Broken::BadReply(
                "a subscribed connection received something other than a message".into()
            )))
        );
    });
}

#[test]
fn a_tls_record_breaks_the_pipe_naming_tls() {
    runtime().block_on(async {
        let (ours, mut server) = tokio::io::duplex(1024);
        let pipe = Pipe::new(Box::new(ours));
        assert!(pipe.heard_nothing());
        // A TLS alert (protocol version), then the close.
        server
            .write_all(&[0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x46])
            .await
            .expect("write");
        drop(server);
        assert_eq!(pipe.request(ping).await, Err(Broken::SpeaksTls));
        assert!(!pipe.heard_nothing());
    });
}

#[test]
fn a_stalled_writer_is_reported() {
    runtime().block_on(async {
        // A tiny buffer that nobody reads: the second request cannot be written.
        let (ours, _server) = tokio::io::duplex(16);
        let pipe = Pipe::new(Box::new(ours));
        let mut big = Box::pin(pipe.request(|out: &mut Vec<u8>| {
            resp::encode(out, 2, [b"ECHO".as_slice(), &[b'x'; 100]]);
        }));
        assert!(poll_once(big.as_mut()).await.is_pending());
        assert!(!pipe.is_flushed());
        assert!(!pipe.is_stalled(Duration::from_secs(60)));
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(pipe.is_stalled(Duration::from_millis(10)));
    });
}

const PUSHED: &[u8] = b">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$0\r\n\r\n";

/// A kept connection that speaks RESP3 (see `Node::listen`): messages are pushes beside the
/// replies, never taken for an answer; the SUBSCRIBE's confirmation is its answer and clears
/// what came before it; a message after the subscription ended is dropped; an UNSUBSCRIBE
/// posted goes out with the next request, and its confirmation is read and dropped.
#[test]
fn on_a_resp3_connection_messages_are_pushes_beside_the_replies() {
    runtime().block_on(async {
        let (ours, mut server) = tokio::io::duplex(64 * 1024);
        let pipe = Pipe::new(Box::new(ours));
        // Not listening yet: a message is dropped, the request still gets its own answer.
        server.write_all(PUSHED).await.expect("write");
        server.write_all(b":1\r\n").await.expect("write");
        assert_eq!(pipe.request(ping).await, Ok(Reply::Int(1)));
        pipe.listen();
        // A stale message (another channel, before the confirmation) is forgotten with it.
        let mut confirmed = PUSHED.to_vec();
        confirmed.extend_from_slice(b">3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n");
        server.write_all(&confirmed).await.expect("write");
        let answer = pipe.request(subscribe).await.expect("confirmed");
        assert!(matches!(answer, Reply::Push(_)), "{answer:?}");
        assert_eq!(poll_push_once(&pipe).await, Poll::Pending);
        // Messages between the replies of two requests: each request its own answer, the
        // messages one wake-up.
        let mut between = b"$2\r\nt1\r\n".to_vec();
        between.extend_from_slice(&PUSHED.repeat(3));
        between.extend_from_slice(b"_\r\n");
        // (Both requests queued before the master answers, as a master answers only what came.)
        let (first, second, ()) =
            futures_util::future::join3(pipe.request(ping), pipe.request(ping), async {
                tokio::task::yield_now().await;
                server.write_all(&between).await.expect("write");
            })
            .await;
        assert_eq!(first, Ok(Reply::Bulk(b"t1".to_vec())));
        assert_eq!(second, Ok(Reply::Nil));
        assert_eq!(poll_push_once(&pipe).await, Poll::Ready(Ok(())));
        assert_eq!(poll_push_once(&pipe).await, Poll::Pending);
        // The subscription ends: UNSUBSCRIBE goes out ahead of the next request, its
        // confirmation and a late message are dropped, the request gets its answer.
        pipe.stop_listening();
        pipe.post(|out: &mut Vec<u8>| resp::encode(out, 2, [b"UNSUBSCRIBE".as_slice(), b"c"]));
        let mut after = PUSHED.to_vec();
        after.extend_from_slice(b">3\r\n$11\r\nunsubscribe\r\n$1\r\nc\r\n:0\r\n:5\r\n");
        server.write_all(&after).await.expect("write");
        assert_eq!(pipe.request(ping).await, Ok(Reply::Int(5)));
        let mut sent = vec![0; 4096];
        let n = server.read(&mut sent).await.expect("read");
        let sent = String::from_utf8_lossy(&sent[..n]);
        let unsubscribe = sent.find("UNSUBSCRIBE").expect("UNSUBSCRIBE sent");
        assert!(
            unsubscribe < sent.rfind("PING").expect("PING sent"),
            "{sent}"
        );
        assert!(!pipe.is_broken());
    });
}
