//! Networking: SO_REUSEPORT listeners and connection buffers with an ordered
//! reply queue.

mod conn;
mod listener;

pub use conn::{Conn, Received, Slot};
pub use listener::listen;
