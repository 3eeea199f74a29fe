//! `send-floor --via uring`: the same sends handed to the kernel through one io_uring, a
//! whole round in one system call.
//!
//! Why: fan-out is one `write` per recipient, and what decides whether batching could help
//! is how much of a send's cost is the system call itself (entry and exit, the file-table
//! lookup) rather than TCP's own work, which no batching removes. io_uring is the only way
//! to hand the kernel many sockets' sends at once; with registered files it also skips the
//! file-table lookup. Measuring it here, before building it into the server (where it
//! would need its own completion handling beside tokio's sockets), says whether it is worth
//! building.
//!
//! The one `unsafe` call is the submission queue's `push`: the kernel reads the buffer and
//! the file after the call returns, so the caller must keep both alive until the
//! completion arrives. Here every submission is waited for before the round ends, the
//! buffer outlives the ring, and the sockets are closed only after the ring is dropped.
#![allow(unsafe_code)]

use std::io;
use std::net::TcpStream;
use std::os::fd::AsRawFd;

use io_uring::{opcode, types, IoUring};

/// Entries of the submission queue: larger rounds go in several batches.
const DEPTH: u32 = 4096;

/// A ring writing one buffer to a fixed set of sockets.
pub struct Ring {
    ring: IoUring,
    fds: Vec<i32>,
    fixed: bool,
}

impl Ring {
    /// A ring for `sockets`; with `fixed`, the sockets are registered with the ring, so a
    /// send names its socket by index and the kernel skips the file-table lookup.
    pub fn new(sockets: &[TcpStream], fixed: bool) -> io::Result<Ring> {
        let ring = IoUring::new(DEPTH)?;
        let fds: Vec<i32> = sockets.iter().map(|s| s.as_raw_fd()).collect();
        if fixed {
            ring.submitter().register_files(&fds)?;
        }
        Ok(Ring { ring, fds, fixed })
    }

    /// Sends `frame` to every socket, waiting for every completion; returns how many
    /// sends were short or refused.
    pub fn round(&mut self, frame: &'static [u8]) -> io::Result<u64> {
        let len = u32::try_from(frame.len()).map_err(io::Error::other)?;
        let mut bad = 0;
        for (batch, fds) in self.fds.chunks(DEPTH as usize).enumerate() {
            let first = batch * DEPTH as usize;
            {
                let mut queue = self.ring.submission();
                for (i, fd) in fds.iter().enumerate() {
                    let entry = match self.fixed {
                        true => {
                            opcode::Send::new(types::Fixed((first + i) as u32), frame.as_ptr(), len)
                        }
                        false => opcode::Send::new(types::Fd(*fd), frame.as_ptr(), len),
                    }
                    .build();
                    // SAFETY: `frame` is `'static`, and the socket stays open until after
                    // this round's completions have all been reaped below (see the
                    // module's comment); the queue has room, as a batch is at most its
                    // depth and the previous batch was submitted and completed.
                    unsafe { queue.push(&entry) }.map_err(io::Error::other)?;
                }
            }
            self.ring.submit_and_wait(fds.len())?;
            let mut done = 0;
            while done < fds.len() {
                for completion in self.ring.completion() {
                    done += 1;
                    if completion.result() != len as i32 {
                        bad += 1;
                    }
                }
                if done < fds.len() {
                    self.ring.submit_and_wait(fds.len() - done)?;
                }
            }
        }
        Ok(bad)
    }
}
