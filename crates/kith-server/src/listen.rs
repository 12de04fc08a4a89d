//! Accepting connections within limits, so no client can hold the server
//! by being slow, silent or numerous (issue 20 item 2).
//!
//! `axum::serve` keeps a connection for as long as the client likes, even
//! before it has authenticated: idle sockets pile up until the process runs
//! out of descriptors and memory. This module runs its own accept loop on
//! hyper's HTTP/1 connection, with:
//!
//! - a **connection limit**: past [`Limits::max_connections`] open
//!   connections, a new one is answered `503` and closed at once;
//! - a **header-read timeout**: a request head must be complete within
//!   [`Limits::header_read_timeout`] of the server starting to wait for it
//!   (a new connection, or the previous answer sent), so a silent or
//!   dribbling client is dropped, and so is a keep-alive connection that
//!   stays unused that long;
//! - a **body-read timeout**: the whole body must arrive within
//!   [`Limits::body_read_timeout`] of the head (`408 request_timeout`);
//! - an **idle timeout**: a connection on which no byte moves for
//!   [`Limits::idle_timeout`] while no request of it is being handled (a
//!   client that stops reading its answer) is closed;
//! - bounded memory per request: heads over [`MAX_HEAD_BYTES`] are refused
//!   by hyper, bodies over [`crate::routes::MAX_BODY_BYTES`] by the router,
//!   and a body is read only by the handler, after authentication.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::Router;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tower_service::Service;

/// Largest request head (request line and headers) a connection buffers.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most headers one request may carry.
pub const MAX_HEADERS: usize = 64;

/// How long clients may take, and how many may be connected at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// From waiting for a request to its head being complete.
    pub header_read_timeout: Duration,
    /// From a request's head to the end of its body.
    pub body_read_timeout: Duration,
    /// No byte read or written, and no request being handled.
    pub idle_timeout: Duration,
    /// Open connections at most; more are answered 503 and closed.
    pub max_connections: usize,
}

impl Default for Limits {
    /// 10 s for a head, 30 s for a body, 60 s idle, 512 connections: a
    /// local agent or a reverse proxy never comes near them, and 512
    /// connections of at most a 1 MiB body each bound request memory to
    /// about half a gigabyte.
    fn default() -> Self {
        Limits {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 512,
        }
    }
}

/// A limit that cannot work.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LimitsError {
    /// A timeout of zero would close every connection at once.
    #[error("{name} must be at least 1 second")]
    ZeroTimeout {
        /// Which timeout.
        name: &'static str,
    },
    /// The connection limit is out of range.
    #[error("max connections must be between 1 and {max}, not {value}")]
    Connections {
        /// What was asked.
        value: usize,
        /// The largest accepted.
        max: usize,
    },
}

/// Largest connection limit accepted (far above what one process can
/// hold open; it keeps the semaphore in range).
pub const MAX_CONNECTIONS_LIMIT: usize = 1 << 20;

impl Limits {
    /// Refuses limits that would make the server unusable.
    pub fn validate(&self) -> Result<(), LimitsError> {
        for (name, d) in [
            ("the header-read timeout", self.header_read_timeout),
            ("the body-read timeout", self.body_read_timeout),
            ("the idle timeout", self.idle_timeout),
        ] {
            if d < Duration::from_secs(1) {
                return Err(LimitsError::ZeroTimeout { name });
            }
        }
        if self.max_connections == 0 || self.max_connections > MAX_CONNECTIONS_LIMIT {
            return Err(LimitsError::Connections {
                value: self.max_connections,
                max: MAX_CONNECTIONS_LIMIT,
            });
        }
        Ok(())
    }
}

/// A request body that did not arrive within the body-read timeout.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
pub struct BodyTimeout(pub Duration);

/// What a connection's idle watch looks at: when a byte last moved, and
/// how many of its requests are being handled.
struct Activity {
    start: Instant,
    last_ms: AtomicU64,
    in_flight: AtomicUsize,
}

impl Activity {
    fn new() -> Arc<Activity> {
        Arc::new(Activity {
            start: Instant::now(),
            last_ms: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
        })
    }

    fn touch(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    fn quiet_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
        self.start.elapsed().saturating_sub(last)
    }

    /// Resolves once the connection has been idle for `limit`.
    async fn idle(&self, limit: Duration) {
        loop {
            let quiet = self.quiet_for();
            if self.in_flight.load(Ordering::Relaxed) == 0 && quiet >= limit {
                return;
            }
            let wait = limit.saturating_sub(quiet).max(Duration::from_millis(200));
            tokio::time::sleep(wait).await;
        }
    }
}

/// Counts a request as being handled until dropped (also when the client
/// goes away and hyper drops the handler's future).
struct InFlight(Arc<Activity>);

impl InFlight {
    fn enter(activity: &Arc<Activity>) -> InFlight {
        activity.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(Arc::clone(activity))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.0.touch();
    }
}

/// The socket, noting every byte that moves.
struct Tracked {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.touch();
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A request body that fails with [`BodyTimeout`] once its deadline
/// passes; the JSON extractor turns that into `408 request_timeout`.
struct DeadlineBody {
    inner: Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
    limit: Duration,
}

impl Body for DeadlineBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(BodyTimeout(self.limit).into())));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The answer to a connection over the limit: written without waiting
/// (a client that does not read it just gets the close).
const BUSY_ANSWER: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
retry-after: 1\r\nconnection: close\r\ncontent-length: 86\r\n\r\n\
{\"error\":{\"code\":\"busy\",\"message\":\"too many open connections; try again in a moment\"}}";

/// Serves `app` on `listener` within `limits` until `shutdown` resolves;
/// then stops accepting, lets every connection finish the request it is
/// handling, and returns once all are closed.
pub async fn serve_with_limits(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            // A stop asked for wins over connections still arriving.
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors and the like: the condition passes as
                // connections close, so wait a little instead of spinning.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            tracing::warn!(
                max = limits.max_connections,
                "connection limit reached; answering 503"
            );
            let _ = stream.try_write(BUSY_ANSWER);
            continue;
        };
        tokio::spawn(connection(
            stream,
            app.clone(),
            limits,
            stop_rx.clone(),
            permit,
        ));
    }
    drop(listener);
    let _ = stop_tx.send(true);
    // Every connection holds a permit until it closes: having them all
    // back means every request in flight has been answered.
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let _ = permits.acquire_many(all).await;
    Ok(())
}

/// One connection, from its first byte to its close.
async fn connection(
    stream: TcpStream,
    app: Router,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) {
    let _ = stream.set_nodelay(true);
    let activity = Activity::new();
    let io = TokioIo::new(Tracked {
        inner: stream,
        activity: Arc::clone(&activity),
    });
    let handler_activity = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let guard = InFlight::enter(&handler_activity);
        let mut app = app.clone();
        let limit = limits.body_read_timeout;
        async move {
            let req = req.map(|inner| DeadlineBody {
                inner,
                deadline: Box::pin(tokio::time::sleep(limit)),
                limit,
            });
            let response = app.call(req).await;
            drop(guard);
            response
        }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS)
        .serve_connection(io, service);
    tokio::pin!(conn);
    let mut stopping = *stop.borrow();
    if stopping {
        conn.as_mut().graceful_shutdown();
    }
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "connection closed with an error");
                }
                return;
            }
            changed = stop.changed(), if !stopping => {
                // Sender gone or shutdown asked: either way, finish up.
                let _ = changed;
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
            () = activity.idle(limits.idle_timeout) => {
                tracing::debug!("closing an idle connection");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_refuse_zero_and_out_of_range() {
        assert!(Limits::default().validate().is_ok());
        let zero = Limits {
            body_read_timeout: Duration::ZERO,
            ..Limits::default()
        };
        assert_eq!(
            zero.validate(),
            Err(LimitsError::ZeroTimeout {
                name: "the body-read timeout"
            })
        );
        let none = Limits {
            max_connections: 0,
            ..Limits::default()
        };
        assert!(matches!(
            none.validate(),
            Err(LimitsError::Connections { value: 0, .. })
        ));
    }

    #[test]
    fn the_busy_answer_declares_its_body_length() {
        let text = std::str::from_utf8(BUSY_ANSWER).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let declared: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(declared, body.len());
        let _: serde_json::Value = serde_json::from_str(body).unwrap();
    }
}
