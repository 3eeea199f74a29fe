//! Receive steering on loopback: the receiving sockets' TCP work moved to the generator's
//! core, as it is on a real network, where it runs on the spectators' machines.
//!
//! Why: on loopback a `send` does not stop at the network device. The kernel hands the
//! packet to the receiving socket in the same call, on the sender's core: IP and TCP
//! receive, the socket lookup among all connections, queuing the data and waking the
//! reader. A fan-out to 10,000 local spectators charges all of that to the server, which
//! no deployment does. Receive Packet Steering (RPS) on `lo` queues each received packet
//! to another core's backlog instead (one inter-processor interrupt per batch), so the
//! server's CPU figure keeps only the sending half. Measured figures say which way they
//! were taken: the comparisons ran without it.
//!
//! The other core's backlog holds `net.core.netdev_max_backlog` packets (1,000 by
//! default); a fan-out to thousands of sockets queues more than that at once, and what
//! does not fit is dropped and sent again by TCP a retransmission timeout later, which
//! made steered latencies seconds long. The backlog is raised for the run and put back
//! with the mask.

use std::path::Path;

/// `lo`'s single receive queue's RPS mask.
const RPS_CPUS: &str = "/sys/class/net/lo/queues/rx-0/rps_cpus";

/// Packets a core's backlog holds before it drops them.
const MAX_BACKLOG: &str = "/proc/sys/net/core/netdev_max_backlog";

/// A backlog for a whole round of sends to every spectator.
const STEERED_BACKLOG: &str = "1000000";

/// Steering in force; the previous mask and backlog come back when it is dropped.
pub struct Steering {
    previous: String,
    previous_backlog: String,
}

impl Steering {
    /// Steers loopback's received packets to `cpu`. Needs root (it writes to /sys).
    pub fn to_cpu(cpu: usize) -> Result<Steering, String> {
        let previous = std::fs::read_to_string(RPS_CPUS)
            .map_err(|e| format!("cannot read {RPS_CPUS}: {e}"))?;
        let previous_backlog = std::fs::read_to_string(MAX_BACKLOG)
            .map_err(|e| format!("cannot read {MAX_BACKLOG}: {e}"))?;
        write(Path::new(MAX_BACKLOG), STEERED_BACKLOG)?;
        let steering = Steering {
            previous: previous.trim().to_string(),
            previous_backlog: previous_backlog.trim().to_string(),
        };
        let mask = format!("{:x}", 1u128 << cpu);
        write(Path::new(RPS_CPUS), &mask)?;
        Ok(steering)
    }
}

impl Drop for Steering {
    fn drop(&mut self) {
        if let Err(e) = write(Path::new(RPS_CPUS), &self.previous) {
            eprintln!("warning: {e}: loopback steering left on");
        }
        if let Err(e) = write(Path::new(MAX_BACKLOG), &self.previous_backlog) {
            eprintln!("warning: {e}: the raised backlog left in place");
        }
    }
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| {
        format!(
            "cannot write {value} to {}: {e} (steering needs root)",
            path.display()
        )
    })
}
