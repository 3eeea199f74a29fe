//! The devices holding this identity, from the prompt of either front-end: `devices` lists
//! them numbered, `revoke <n>` revokes one by its number in that list, `link` shows a
//! one-time code to type on another device (`stoa link <code>`, or Devices in the browser).
//!
//! Why numbers, not ids: a device id is 17 characters nobody wants to type; the number of
//! the list last shown names the device the user just read.

use stoa_protocol::wire::{ClientMessage, DeviceInfo, ServerMessage};

use super::answers::Pending;
use super::{Note, Session};
use crate::connection::RequestError;
use crate::present;

impl Session {
    /// `devices`: asks for the list (shown when it comes).
    pub(super) fn devices_command(&mut self) {
        self.request(Pending::Devices, ClientMessage::Devices { rid: None });
    }

    /// `link`: asks for a one-time code naming us.
    pub(super) fn link_command(&mut self) {
        self.request(Pending::LinkCode, ClientMessage::LinkCode { rid: None });
    }

    /// `revoke <n>`: revokes the `n`th device of the list last shown.
    pub(super) fn revoke_command(&mut self, n: &str) {
        let index = n.parse::<usize>().ok().filter(|i| *i >= 1);
        let Some(device) = index.and_then(|i| self.devices.get(i - 1)).cloned() else {
            let error = if self.devices.is_empty() {
                "error input: type devices first, then revoke <number> from its list".to_string()
            } else {
                format!(
                    "error input: '{n}' is not a device number: 1 to {}",
                    self.devices.len()
                )
            };
            self.notes.push(Note::Error(error));
            return;
        };
        let msg = ClientMessage::DeviceRevoke {
            rid: None,
            id: device.id.clone(),
        };
        self.request(Pending::Revoke(device), msg);
    }

    /// The answers to `devices`, `link` and `revoke`.
    pub(super) fn on_devices_answer(
        &mut self,
        pending: Pending,
        answer: Result<ServerMessage, RequestError>,
    ) {
        let answer = match answer {
            Ok(a) => a,
            Err(e) => return self.error(&e),
        };
        match (pending, answer) {
            (Pending::Devices, ServerMessage::Devices { devices, .. }) => {
                let text = devices_page(&devices);
                self.devices = devices;
                self.notes.push(Note::Page {
                    title: format!("devices of {} ({})", self.me.name, self.devices.len()),
                    text,
                });
            }
            (Pending::LinkCode, ServerMessage::LinkCode { code, .. }) => self.info(format!(
                "link code: {code} (type it on the other device within 5 minutes: stoa link {code}, or Devices in the browser)"
            )),
            (Pending::Revoke(device), ServerMessage::Ok { .. }) => {
                self.devices.retain(|d| d.id != device.id);
                self.info(format!(
                    "revoked {}: its token no longer works and its connections are closed",
                    device.label
                ));
            }
            _ => self
                .notes
                .push(Note::Error("error: the server answered something else".into())),
        }
    }
}

/// The list as `devices` shows it: one numbered line per device, then how to revoke one.
fn devices_page(devices: &[DeviceInfo]) -> String {
    let mut lines: Vec<String> = devices
        .iter()
        .enumerate()
        .map(|(i, d)| format!("{}. {}", i + 1, present::device_text(d)))
        .collect();
    lines.push(String::new());
    lines.push(
        "revoke <n> revokes device n (its token stops working, its connections close); link shows a code to link another device"
            .into(),
    );
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_numbers_devices_and_marks_this_one() {
        let d = |id: &str, label: &str, current| DeviceInfo {
            id: id.into(),
            label: label.into(),
            created_ms: 0,
            last_seen_ms: 60_000,
            current,
        };
        let page = devices_page(&[d("d1", "browser", false), d("d2", "terminal", true)]);
        let lines: Vec<&str> = page.lines().collect();
        assert_eq!(
            lines[0],
            "1. browser  linked 1970-01-01 00:00  last seen 1970-01-01 00:01"
        );
        assert_eq!(
            lines[1],
            "2. terminal  linked 1970-01-01 00:00  last seen 1970-01-01 00:01  (this device)"
        );
        assert!(lines[3].starts_with("revoke <n>"), "{page}");
    }
}
