use std::io;
use std::net::{SocketAddr, ToSocketAddrs};

use socket2::{Domain, Protocol, Socket, Type};

/// Binds `n` non-blocking listeners to `addr` with SO_REUSEPORT, so every
/// shard accepts on the same address and the kernel spreads new
/// connections over them.
///
/// SO_REUSEPORT alone would let a second ember (or anything else that sets
/// it) bind the same port and silently take a share of the connections, so
/// the address is first bound once without it: that fails with
/// `AddrInUse` while anyone listens there, as Redis's start-up does. Port 0
/// binds one ephemeral port and the other shards join it.
pub fn listen(addr: &str, n: usize) -> io::Result<Vec<mio::net::TcpListener>> {
    let mut addr: SocketAddr = addr
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address"))?;
    if addr.port() != 0 {
        drop(bind(addr, false)?);
    }
    let mut listeners = Vec::with_capacity(n);
    for _ in 0..n {
        let socket = bind(addr, true)?;
        socket.listen(1024)?;
        addr = socket
            .local_addr()?
            .as_socket()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not an IP address"))?;
        listeners.push(mio::net::TcpListener::from_std(socket.into()));
    }
    Ok(listeners)
}

fn bind(addr: SocketAddr, reuse_port: bool) -> io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // Lets a restarted server bind while old connections sit in TIME_WAIT.
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(reuse_port)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_in_use_is_refused_even_to_reuseport_listeners() {
        let first = listen("127.0.0.1:0", 2).unwrap();
        let port = first[0].local_addr().unwrap().port();
        assert_eq!(first[1].local_addr().unwrap().port(), port);
        let err = listen(&format!("127.0.0.1:{port}"), 1).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
    }

    #[test]
    fn a_free_port_binds_every_shard() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let listeners = listen(&format!("127.0.0.1:{port}"), 3).unwrap();
        assert!(listeners
            .iter()
            .all(|l| l.local_addr().unwrap().port() == port));
    }
}
