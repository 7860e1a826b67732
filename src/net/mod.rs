//! Networking: SO_REUSEPORT listeners and connection buffers with an ordered
//! reply queue.

mod conn;
mod listener;
mod output;

pub use conn::{Conn, Received, Slot};
pub use listener::listen;
pub use output::Output;
