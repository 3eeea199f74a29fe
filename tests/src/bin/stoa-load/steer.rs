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

use std::path::Path;

/// `lo`'s single receive queue's RPS mask.
const RPS_CPUS: &str = "/sys/class/net/lo/queues/rx-0/rps_cpus";

/// Steering in force; the previous mask comes back when it is dropped.
pub struct Steering {
    previous: String,
}

impl Steering {
    /// Steers loopback's received packets to `cpu`. Needs root (it writes to /sys).
    pub fn to_cpu(cpu: usize) -> Result<Steering, String> {
        let previous = std::fs::read_to_string(RPS_CPUS)
            .map_err(|e| format!("cannot read {RPS_CPUS}: {e}"))?;
        let mask = format!("{:x}", 1u128 << cpu);
        write(Path::new(RPS_CPUS), &mask)?;
        Ok(Steering {
            previous: previous.trim().to_string(),
        })
    }
}

impl Drop for Steering {
    fn drop(&mut self) {
        if let Err(e) = write(Path::new(RPS_CPUS), &self.previous) {
            eprintln!("warning: {e}: loopback steering left on");
        }
    }
}

fn write(path: &Path, mask: &str) -> Result<(), String> {
    std::fs::write(path, mask).map_err(|e| {
        format!(
            "cannot write {mask} to {}: {e} (steering needs root)",
            path.display()
        )
    })
}
