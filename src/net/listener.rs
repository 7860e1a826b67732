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

/// The listeners of every address of `bind` (Redis's syntax: `*` is every
/// IPv4 address, `::*` every IPv6 one, a `-` prefix makes an address
/// optional: skipped when this host lacks it), all on `port`, `n` of each:
/// element `i` holds shard `i`'s. Port 0: the first address picks a free
/// port and the others take it too.
pub fn listen_all(
    bind: &[(String, bool)],
    port: u16,
    n: usize,
) -> io::Result<Vec<Vec<mio::net::TcpListener>>> {
    let mut per_shard: Vec<Vec<mio::net::TcpListener>> = (0..n).map(|_| Vec::new()).collect();
    let mut port = port;
    for (addr, optional) in bind {
        let host = match addr.as_str() {
            "*" => "0.0.0.0",
            "::*" => "::",
            other => other,
        };
        let text = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        match listen(&text, n) {
            Ok(listeners) => {
                if let Some(first) = listeners.first() {
                    port = first.local_addr()?.port();
                }
                for (shard, l) in listeners.into_iter().enumerate() {
                    per_shard[shard].push(l);
                }
            }
            // As Redis: an optional address this host cannot bind is skipped.
            Err(e) if *optional && unavailable(&e) => {
                log::warn!("could not bind optional address {addr}: {e}");
            }
            Err(e) => return Err(e),
        }
    }
    if per_shard.iter().any(Vec::is_empty) {
        return Err(io::Error::new(
            io::ErrorKind::AddrNotAvailable,
            "no address could be bound",
        ));
    }
    Ok(per_shard)
}

/// An error as Redis logs it (`strerror`'s text, without Rust's
/// ` (os error N)`).
pub fn os_reason(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Errors that mean the address (or its protocol) is not on this host.
fn unavailable(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::AddrNotAvailable
        || matches!(
            e.raw_os_error(),
            Some(libc::EAFNOSUPPORT) | Some(libc::EPROTONOSUPPORT) | Some(libc::EADDRNOTAVAIL)
        )
}

fn bind(addr: SocketAddr, reuse_port: bool) -> io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if addr.is_ipv6() {
        // As Redis: `::` takes IPv6 only, so `* ::*` binds both.
        socket.set_only_v6(true)?;
    }
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
    fn several_addresses_share_one_port_and_optional_ones_may_be_missing() {
        let bind = vec![
            ("127.0.0.1".to_string(), false),
            ("203.0.113.254".to_string(), true),
        ];
        let per_shard = listen_all(&bind, 0, 2).unwrap();
        assert_eq!(per_shard.len(), 2);
        assert_eq!(per_shard[0].len(), 1);
        let strict = vec![("203.0.113.254".to_string(), false)];
        assert!(listen_all(&strict, 0, 1).is_err());
    }

    #[test]
    fn errors_read_as_strerror() {
        let e = io::Error::from_raw_os_error(libc::EADDRINUSE);
        assert_eq!(os_reason(&e), "Address already in use");
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
