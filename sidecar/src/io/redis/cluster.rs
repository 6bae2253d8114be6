//! A Redis Cluster's topology as the sidecar follows it: the masters and
//! nodes in a `CLUSTER NODES` reply, every node seen since the process
//! started (so a cluster connection can be opened again after the node it
//! was given died), and the cluster connection itself, seeded with them.
//! A key's hash slot is `protocol::keys::slot_of`.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use redis::cluster::{ClusterClient, ClusterConnection};
use redis::RedisResult;

/// How long opening a cluster connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Opens a cluster connection seeded with `url` and every known node,
/// routed by key (following `MOVED`/`ASK` and topology changes), and
/// remembers the nodes it reports.
pub fn connect_cluster(url: &str, io_timeout: Duration) -> RedisResult<ClusterConnection> {
    let mut builder = ClusterClient::builder(cluster_seeds(url))
        .connection_timeout(CONNECT_TIMEOUT)
        .response_timeout(io_timeout);
    if let Some(certs) = conn::installed().redis.certs() {
        builder = builder.certs(certs);
    }
    let mut conn = builder.build()?.get_connection()?;
    if let Ok(nodes) = redis::cmd("CLUSTER")
        .arg("NODES")
        .query::<String>(&mut conn)
    {
        remember_cluster_nodes(&nodes);
    }
    Ok(conn)
}

/// Masters (`host:port`) in the output of `CLUSTER NODES` that serve slots
/// and are not failing.
pub fn parse_cluster_masters(nodes: &str) -> Vec<String> {
    // Fewer than 9 fields: the master serves no slots.
    node_addrs(nodes, 9, |flags| {
        flags.split(',').any(|x| x == "master")
            && !flags.contains("fail")
            && !flags.contains("noaddr")
    })
}

/// Addresses (`host:port`) of every node, master or replica, in the output
/// of `CLUSTER NODES` that is not failing, without an address, or in a
/// handshake.
pub fn parse_cluster_addrs(nodes: &str) -> Vec<String> {
    node_addrs(nodes, 8, |flags| {
        !flags.contains("fail") && !flags.contains("noaddr") && !flags.contains("handshake")
    })
}

/// The sorted, distinct `host:port` of the `CLUSTER NODES` lines that have
/// at least `min_fields` fields and whose flags (third field) are `wanted`.
fn node_addrs(nodes: &str, min_fields: usize, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = nodes
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < min_fields || !wanted(f[2]) {
                return None;
            }
            // ip:port@cport[,hostname]
            let addr = f[1].split(['@', ',']).next().unwrap_or("");
            (!addr.is_empty() && !addr.starts_with(':')).then(|| addr.to_owned())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Cluster nodes seen so far (see [`connect_cluster`]).
fn known_nodes() -> &'static Mutex<Vec<String>> {
    static KNOWN: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    KNOWN.get_or_init(|| Mutex::new(Vec::new()))
}

/// Adds the nodes of a `CLUSTER NODES` reply to the known nodes (a node
/// is never forgotten: a dead one merely costs a refused connection).
pub fn remember_cluster_nodes(nodes: &str) {
    let mut known = known_nodes().lock().unwrap_or_else(|e| e.into_inner());
    known.extend(parse_cluster_addrs(nodes));
    known.sort();
    known.dedup();
}

/// Seed URLs of a cluster connection: `url` first, then every known node
/// (with the scheme, credentials and database of `url`).
pub fn cluster_seeds(url: &str) -> Vec<String> {
    let known = known_nodes().lock().unwrap_or_else(|e| e.into_inner());
    let mut seeds = vec![url.to_owned()];
    for addr in known.iter() {
        let u = node_url(url, addr);
        if !seeds.contains(&u) {
            seeds.push(u);
        }
    }
    seeds
}

/// `url` with its `host:port` replaced by `hostport` (scheme, credentials,
/// database and query kept).
pub fn node_url(url: &str, hostport: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return format!("redis://{hostport}/");
    };
    let (auth, hostpath) = match rest.rsplit_once('@') {
        Some((a, h)) => (format!("{a}@"), h),
        None => (String::new(), rest),
    };
    let tail = hostpath
        .find(['/', '?'])
        .map(|i| &hostpath[i..])
        .unwrap_or("");
    format!("{scheme}://{auth}{hostport}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masters_and_node_urls() {
        let nodes = "\
07c3 127.0.0.1:30004@40004 slave e7d1 0 1426238317239 4 connected
67ed 127.0.0.1:30002@40002,host-b master - 0 1426238316232 2 connected 5461-10922
292f 127.0.0.1:30003@40003 master - 0 1426238318243 3 connected 10923-16383
6ec2 127.0.0.1:30005@40005 master,fail - 0 1426238316232 5 connected 1-2
824f 127.0.0.1:30006@40006 master - 0 0 6 connected
e7d1 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460";
        assert_eq!(
            parse_cluster_masters(nodes),
            ["127.0.0.1:30001", "127.0.0.1:30002", "127.0.0.1:30003"]
        );
        assert_eq!(
            node_url("redis://:pw@10.0.0.1:7000/0", "127.0.0.1:30001"),
            "redis://:pw@127.0.0.1:30001/0"
        );
        assert_eq!(node_url("redis://h:1", "n:2"), "redis://n:2");
        assert_eq!(
            node_url("rediss://u:p@h:1/?x=1", "n:2"),
            "rediss://u:p@n:2/?x=1"
        );
    }

    #[test]
    fn cluster_seeds_include_every_known_node() {
        let nodes = "\
07c3 10.0.0.4:30004@40004 slave e7d1 0 1426238317239 4 connected
67ed 10.0.0.2:30002@40002,host-b master - 0 1426238316232 2 connected 5461-10922
6ec2 10.0.0.5:30005@40005 master,fail - 0 1426238316232 5 connected
1a2b :0@0 master,noaddr - 0 0 0 disconnected
e7d1 10.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460";
        assert_eq!(
            parse_cluster_addrs(nodes),
            ["10.0.0.1:30001", "10.0.0.2:30002", "10.0.0.4:30004"]
        );
        remember_cluster_nodes(nodes);
        let seeds = cluster_seeds("redis://:pw@10.0.0.1:30001/");
        assert_eq!(seeds[0], "redis://:pw@10.0.0.1:30001/");
        for n in ["10.0.0.2:30002", "10.0.0.4:30004"] {
            assert!(seeds.contains(&format!("redis://:pw@{n}/")), "{seeds:?}");
        }
        assert_eq!(
            seeds
                .iter()
                .filter(|s| s.contains("10.0.0.1:30001"))
                .count(),
            1,
            "{seeds:?}"
        );
        assert!(!seeds.iter().any(|s| s.contains("30005")), "{seeds:?}");
    }
}
