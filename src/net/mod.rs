//! Networking: SO_REUSEPORT listeners, the options of accepted sockets
//! (`socket`: TCP_NODELAY, `tcp-keepalive`) and connection buffers with an
//! ordered reply queue; `tls` passes a TLS connection's bytes through
//! rustls on the same sockets.

mod conn;
mod listener;
mod output;
mod socket;
pub mod tls;

pub use conn::{Conn, Received, Slot};
pub use listener::{listen, listen_all, os_reason};
pub use output::{Output, BLOCK as OUTPUT_BLOCK};
pub use socket::tune_accepted;
