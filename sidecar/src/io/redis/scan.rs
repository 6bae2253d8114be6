//! Finding events by their keys: one `SCAN MATCH ticket:{*}:<part> TYPE
//! <type>` on a server, or on every master of a cluster (SCAN is per
//! node). The reader's discovery and reconcile use it; the keyspace is
//! never scanned on the hot path.

use std::time::Duration;

use redis::{ConnectionLike, RedisResult};

use super::cluster::{node_url, parse_cluster_masters, remember_cluster_nodes};
use super::connect::{connect, Conn};
use protocol::keys::{self, Part};

/// How long a master of a cluster may take to answer its SCAN.
const NODE_TIMEOUT: Duration = Duration::from_secs(10);

/// Keys per SCAN step.
const SCAN_COUNT: usize = 1000;

/// Events with a `ticket:{E}:<part>` key of `type_`: one SCAN on the
/// server, or on every master of the cluster (`seed_url`'s credentials).
pub fn scan_all(
    seed_url: &str,
    conn: &mut Conn,
    part: Part,
    type_: &str,
) -> RedisResult<Vec<String>> {
    let c = match conn {
        Conn::Cluster(c) => c,
        other => return scan_events(other.as_dyn(), part, type_),
    };
    let nodes: String = redis::cmd("CLUSTER").arg("NODES").query(c.as_mut())?;
    remember_cluster_nodes(&nodes);
    let mut out = Vec::new();
    for m in parse_cluster_masters(&nodes) {
        let mut node = connect(&node_url(seed_url, &m), NODE_TIMEOUT)?;
        out.extend(scan_events(&mut node, part, type_)?);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// All event ids with a `ticket:{E}:<part>` key of `type_` (one SCAN).
pub fn scan_events(
    conn: &mut dyn ConnectionLike,
    part: Part,
    type_: &str,
) -> RedisResult<Vec<String>> {
    let pattern = keys::key("*", part);
    let mut cursor: u64 = 0;
    let mut out = Vec::new();
    loop {
        let (next, found): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("TYPE")
            .arg(type_)
            .arg("COUNT")
            .arg(SCAN_COUNT)
            .query(conn)?;
        out.extend(
            found
                .iter()
                .filter_map(|k| keys::event_of_key(k.as_bytes(), part))
                .map(str::to_owned),
        );
        if next == 0 {
            break;
        }
        cursor = next;
    }
    out.sort();
    out.dedup();
    Ok(out)
}
