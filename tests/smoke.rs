mod common;

use common::{Reply, Server};

#[test]
fn ping_set_get_over_two_shards() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    assert_eq!(raw.cmd(&["PING"]), Reply::Simple("PONG".into()));
    assert_eq!(raw.cmd(&["SET", "k", "v"]), Reply::Simple("OK".into()));
    assert_eq!(raw.cmd(&["GET", "k"]), Reply::bulk("v"));
    let mut client = server.client();
    let v: String = redis::cmd("GET").arg("k").query(&mut client).unwrap();
    assert_eq!(v, "v");
}
