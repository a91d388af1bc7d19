//! [`serve`]: the standalone server, for applications without an HTTP server of their
//! own: the [`router`](super::router) on a bound listener that holds at most
//! `max_connections` connections at once, with `ConnectInfo` (so command events name the
//! caller's address), until the supervisor shuts down or [`HttpServer::stop`].

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::serve::Listener;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::HttpConfig;
use crate::supervisor::SupervisorHandle;

/// A running standalone server (see [`serve`]).
#[derive(Debug)]
pub struct HttpServer {
    local_addr: SocketAddr,
    stop: CancellationToken,
    task: JoinHandle<io::Result<()>>,
}

impl HttpServer {
    /// The address it listens on (the port the OS picked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting, ends the event streams (their clients resume elsewhere or later with
    /// `Last-Event-ID`), lets the other requests in progress finish, and waits until the
    /// server ended.
    ///
    /// # Errors
    /// The server's I/O error, if it failed.
    pub async fn stop(self) -> io::Result<()> {
        self.stop.cancel();
        self.closed().await
    }

    /// Waits until the server ended by itself: the supervisor shut down (or [`stop`](Self::stop)).
    ///
    /// # Errors
    /// The server's I/O error, if it failed.
    pub async fn closed(self) -> io::Result<()> {
        match self.task.await {
            Ok(result) => result,
            Err(error) => Err(io::Error::other(error)),
        }
    }
}

/// Binds `addr` and serves the HTTP face of `handle` there until the supervisor shuts down
/// (or [`HttpServer::stop`]). At most `config`'s `max_connections` connections are held;
/// more wait in the kernel's backlog. Bind loopback (`127.0.0.1:port`) unless the network
/// is trusted: see docs/semantics.md#http-threat-model.
///
/// # Errors
/// [`io::ErrorKind::InvalidInput`] when `addr` is not a loopback address and `config`
/// names no host ([`HttpConfig::with_allowed_hosts`]) nor allows any
/// ([`HttpConfig::with_any_host`]): clients reaching it by another name would all be
/// refused (421). Else the bind's I/O error (address in use, permission denied); it must
/// be called inside a Tokio runtime.
pub async fn serve(
    handle: SupervisorHandle,
    addr: SocketAddr,
    config: HttpConfig,
) -> io::Result<HttpServer> {
    if !addr.ip().to_canonical().is_loopback() && config.hosts.is_loopback_only() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{addr} is not a loopback address: list the host names clients use \
                 (HttpConfig::with_allowed_hosts) or allow any (HttpConfig::with_any_host)"
            ),
        ));
    }
    let listener = TcpListener::bind(addr).await?;
    let local_addr = listener.local_addr()?;
    let bounded = Bounded {
        listener,
        permits: Arc::new(Semaphore::new(config.max_connections)),
    };
    let stop = CancellationToken::new();
    let ended = handle.runtime().stopping().root_token().clone();
    let router = super::router_until(handle, config, stop.clone());
    let until = stop.clone();
    let task = tokio::spawn(async move {
        axum::serve(
            bounded,
            router.into_make_service_with_connect_info::<Caller>(),
        )
        .with_graceful_shutdown(async move {
            tokio::select! {
                () = until.cancelled() => {}
                () = ended.cancelled() => {}
            }
        })
        .await
    });
    Ok(HttpServer {
        local_addr,
        stop,
        task,
    })
}

/// A TCP listener that holds at most as many connections as it has permits.
struct Bounded {
    listener: TcpListener,
    permits: Arc<Semaphore>,
}

/// A connection holding its permit until it is dropped.
pub(crate) struct Held {
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
}

impl Listener for Bounded {
    type Io = Held;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            // The semaphore is never closed.
            let Ok(permit) = self.permits.clone().acquire_owned().await else {
                continue;
            };
            match self.listener.accept().await {
                Ok((stream, addr)) => {
                    return (
                        Held {
                            stream,
                            _permit: permit,
                        },
                        addr,
                    );
                }
                // As axum's own listener: a failed accept (too many open files, a
                // connection reset before it was taken) is retried after a short pause.
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}

/// The caller's address as the standalone server hands it to the router (`ConnectInfo`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Caller(pub(crate) SocketAddr);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, Bounded>> for Caller {
    fn connect_info(stream: axum::serve::IncomingStream<'_, Bounded>) -> Self {
        Caller(*stream.remote_addr())
    }
}

impl AsyncRead for Held {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Held {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
