//! A connection leaving its shard's loop for threads of its own (a
//! replica after PSYNC/SYNC, `Action::Handoff`): its socket, its TLS
//! session when it came in on `tls-port`, and the input it sent after
//! the command.
//!
//! The replica's threads are two, a writer (the stream) and a reader (its
//! ACKs), each blocking on the socket. A plain socket is cloned; a TLS
//! session is one state machine, so the two share it behind a mutex held
//! only while bytes move between it and memory: the reader takes the
//! socket's bytes without the lock, then feeds them in under it, and never
//! holds it while it waits on the socket. The writer holds it while its
//! records go out (a blocking write, bounded by the socket's timeout), so
//! an ACK waits for that write at most.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex, MutexGuard};

use rustls::ServerConnection;

/// See the module doc.
pub struct Detached {
    pub stream: TcpStream,
    pub tls: Option<Box<ServerConnection>>,
    /// What the client sent after the command, already decrypted.
    pub unread: Vec<u8>,
}

/// One thread's side of a detached connection: reads or writes plaintext.
pub struct Half {
    sock: TcpStream,
    tls: Option<Arc<Mutex<ServerConnection>>>,
    /// Bytes read off the socket for rustls (the reader's).
    raw: Vec<u8>,
}

impl Detached {
    /// A writer and a reader over the one connection, and the unread
    /// input. Socket options set before this apply to both.
    pub fn split(self) -> io::Result<(Half, Half, Vec<u8>)> {
        let tls = self.tls.map(|t| Arc::new(Mutex::new(*t)));
        let reader = Half {
            sock: self.stream.try_clone()?,
            tls: tls.clone(),
            raw: vec![0; 16 * 1024],
        };
        let writer = Half {
            sock: self.stream,
            tls,
            raw: Vec::new(),
        };
        Ok((writer, reader, self.unread))
    }
}

fn lock(tls: &Mutex<ServerConnection>) -> MutexGuard<'_, ServerConnection> {
    tls.lock().unwrap_or_else(|e| e.into_inner())
}

impl Half {
    /// The TCP socket (its timeouts, its shutdown).
    pub fn socket(&self) -> &TcpStream {
        &self.sock
    }
}

impl Write for Half {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(tls) = &self.tls else {
            return self.sock.write(buf);
        };
        let mut tls = lock(tls);
        // rustls takes plaintext up to its buffer limit; what it took goes
        // out whole before this returns, so a full buffer empties first.
        let mut taken = tls.writer().write(buf)?;
        loop {
            while tls.wants_write() {
                tls.write_tls(&mut self.sock)?;
            }
            if taken > 0 || buf.is_empty() {
                return Ok(taken);
            }
            taken = tls.writer().write(buf)?;
            if taken == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &self.tls {
            None => self.sock.flush(),
            Some(tls) => {
                let mut tls = lock(tls);
                while tls.wants_write() {
                    tls.write_tls(&mut self.sock)?;
                }
                Ok(())
            }
        }
    }
}

impl Read for Half {
    /// Plaintext, waiting on the socket (with its read timeout) when
    /// rustls has none; 0 at the peer's end.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(tls) = &self.tls else {
            return self.sock.read(buf);
        };
        loop {
            match lock(tls).reader().read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                other => return other,
            }
            let n = self.sock.read(&mut self.raw)?;
            if n == 0 {
                return Ok(0);
            }
            let mut tls = lock(tls);
            let mut fed = &self.raw[..n];
            while !fed.is_empty() {
                tls.read_tls(&mut fed)?;
                tls.process_new_packets()
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            }
        }
    }
}
