//! Starts a private redis-server and exits without running any destructor,
//! as a test process that dies abruptly would. `harness.rs` runs it to
//! check that the harness's watchdog still kills the server.

use ticketgate_tests::RedisServer;

fn main() {
    let server = RedisServer::start();
    println!(
        "LEAKED pid={} dir={}",
        server.pid().unwrap_or(0),
        server.dir().display()
    );
    std::process::exit(0);
}
