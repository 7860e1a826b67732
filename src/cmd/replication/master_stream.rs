//! A replica's socket to its master: plain TCP, or TLS through rustls
//! (`tls-replication yes`) on the same blocking socket, one type for the
//! link's reads and writes either way. The link thread alone uses it, so
//! the TLS session needs no lock; the socket's read and write timeouts
//! apply through rustls (a timed-out read is an error the link retries,
//! rustls keeps what it had read).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};

pub enum MasterStream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl MasterStream {
    /// `sock` as is, or wrapped in a TLS client of `config` for `host`
    /// (the handshake runs on the first read or write).
    pub fn new(
        sock: TcpStream,
        config: Option<Arc<ClientConfig>>,
        host: &str,
    ) -> io::Result<MasterStream> {
        let Some(config) = config else {
            return Ok(MasterStream::Plain(sock));
        };
        let name = ServerName::try_from(host.to_string())
            .map_err(|e| io::Error::other(format!("bad master name for TLS {host}: {e}")))?;
        let conn = ClientConnection::new(config, name).map_err(io::Error::other)?;
        Ok(MasterStream::Tls(Box::new(StreamOwned::new(conn, sock))))
    }

    /// The TCP socket under it (for its timeouts).
    pub fn socket(&self) -> &TcpStream {
        match self {
            MasterStream::Plain(s) => s,
            MasterStream::Tls(s) => s.get_ref(),
        }
    }
}

impl Read for MasterStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            MasterStream::Plain(s) => s.read(buf),
            MasterStream::Tls(s) => match s.read(buf) {
                // The master closed without a TLS close_notify: an end.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
                other => other,
            },
        }
    }
}

impl Write for MasterStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            MasterStream::Plain(s) => s.write(buf),
            MasterStream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            MasterStream::Plain(s) => s.flush(),
            MasterStream::Tls(s) => s.flush(),
        }
    }
}
