use super::{Frame, Protocol};

/// Appends the wire form of `frame` in protocol `proto` to `out`.
pub fn encode(frame: &Frame, proto: Protocol, out: &mut Vec<u8>) {
    let _ = (frame, proto, out);
    todo!()
}
