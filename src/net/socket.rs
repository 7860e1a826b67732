//! Options of an accepted client socket.

use std::time::Duration;

use socket2::{SockRef, TcpKeepalive};

/// Sets up an accepted connection: no Nagle delay (replies go out as they
/// are written), and with `keepalive_s` > 0 (`tcp-keepalive`) TCP
/// keepalive as Redis's `anetKeepAlive` sets it: the first probe after
/// `keepalive_s` idle seconds, then one every third of that (at least a
/// second), and the peer is dropped after 3 unanswered ones. So a client
/// that vanished without a FIN (a dead host, a NAT that forgot the flow)
/// is closed in about twice `keepalive_s` rather than never. A failure
/// leaves the connection as the kernel made it; it is only worse at
/// noticing dead peers, so it is logged and the client served.
pub fn tune_accepted(stream: &mio::net::TcpStream, keepalive_s: u64) {
    if let Err(e) = stream.set_nodelay(true) {
        log::debug!("TCP_NODELAY: {e}");
    }
    if keepalive_s == 0 {
        return;
    }
    let idle = Duration::from_secs(keepalive_s);
    let keepalive = TcpKeepalive::new()
        .with_time(idle)
        .with_interval((idle / 3).max(Duration::from_secs(1)))
        .with_retries(3);
    if let Err(e) = SockRef::from(stream).set_tcp_keepalive(&keepalive) {
        log::debug!("TCP keepalive of {keepalive_s} s: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Accepted pairs: the server side as mio gives it, and the client.
    fn pair() -> (mio::net::TcpStream, std::net::TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        (mio::net::TcpStream::from_std(server), client)
    }

    #[test]
    fn keepalive_is_set_as_redis_sets_it() {
        let (server, _client) = pair();
        tune_accepted(&server, 300);
        let s = SockRef::from(&server);
        assert!(s.keepalive().unwrap());
        assert!(s.tcp_nodelay().unwrap());
        assert_eq!(s.tcp_keepalive_time().unwrap(), Duration::from_secs(300));
        assert_eq!(
            s.tcp_keepalive_interval().unwrap(),
            Duration::from_secs(100)
        );
        assert_eq!(s.tcp_keepalive_retries().unwrap(), 3);
        // Under 3 s the interval is still a second.
        let (server, _client) = pair();
        tune_accepted(&server, 2);
        assert_eq!(
            SockRef::from(&server).tcp_keepalive_interval().unwrap(),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn zero_leaves_keepalive_off() {
        let (server, _client) = pair();
        tune_accepted(&server, 0);
        assert!(!SockRef::from(&server).keepalive().unwrap());
    }
}
